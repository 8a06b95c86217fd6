"""POST /api/v1/webhooks/payments (docs/decisions.md#payments-webhook-inbound): signature, storage,
at-most-once, failures."""

from __future__ import annotations

import time

import pytest

from payments import signing
from payments.provider_events import build_event
from tests.support.credits import credits_add, credits_of
from tests.webhooks_app.conftest import WEBHOOK_URL, handling, post_event
from webhooks_app.models import InboundDelivery, InboundEvent, InboundEventStatus

pytestmark = pytest.mark.django_db

TYPE = "test.counted"


@pytest.fixture(autouse=True)
def _secrets(settings):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_current", "whsec_previous"]


@pytest.fixture
def counter(alice):
    """A handler that adds one credit to alice per applied event, and remembers what it saw."""
    seen = []

    def handler(event):
        seen.append(event)
        credits_add(alice, 1)

    with handling(TYPE, handler):
        yield seen


def credits(user) -> int:
    user.refresh_from_db()
    return credits_of(user)


def event(**kwargs):
    return build_event(TYPE, {"id": "pi_test000000000000000000001", "metadata": {"task_id": "t1"}}, **kwargs)


def test_a_valid_signature_is_accepted_and_applied(api, counter, alice):
    signed = event()

    response = post_event(api, signed)

    assert response.status_code == 200, response.content
    assert response.json() == {"status": "processed", "event_id": signed.event_id}
    assert credits(alice) == 1
    stored = InboundEvent.objects.get(event_id=signed.event_id)
    assert stored.status == InboundEventStatus.PROCESSED
    assert stored.object_id == "pi_test000000000000000000001"
    [seen] = counter
    assert seen.id == signed.event_id
    assert seen.type == TYPE
    assert seen.created.tzinfo is not None
    assert seen.object["metadata"] == {"task_id": "t1"}
    delivery = InboundDelivery.objects.get()
    assert delivery.signature_valid is True
    assert delivery.outcome == "processed"
    assert delivery.remote_ip == "127.0.0.1"
    assert delivery.body == signed.body.decode()
    assert delivery.headers["Payments-Signature"] == signed.headers["Payments-Signature"]
    assert delivery.inbound_event == stored
    assert "X-RateLimit-Limit" in response.headers


def test_the_second_configured_secret_is_accepted(api, counter, alice):
    response = post_event(api, event(secret="whsec_previous"))

    assert response.status_code == 200
    assert response.json()["status"] == "processed"
    assert credits(alice) == 1


def test_any_matching_v1_among_several_passes(api, counter, alice):
    signed = event()
    t = int(time.time())
    header = f"t={t},v1={'0' * 64},v1={signing.compute('whsec_previous', t, signed.body)}"

    response = post_event(api, signed, signature=header)

    assert response.status_code == 200
    assert credits(alice) == 1


def _assert_refused(response, alice):
    assert response.status_code == 400, response.content
    assert response.json() == {
        "detail": "The Payments-Signature header is missing or invalid.",
        "code": "invalid_signature",
    }
    assert credits(alice) == 0
    assert InboundEvent.objects.count() == 0
    delivery = InboundDelivery.objects.get()
    assert delivery.signature_valid is False
    assert delivery.outcome == "invalid_signature"


def test_a_tampered_body_is_refused(api, counter, alice):
    signed = event()

    response = post_event(api, signed, body=signed.body.replace(b"t1", b"t2"))

    _assert_refused(response, alice)
    delivery = InboundDelivery.objects.get()
    assert (delivery.body, delivery.body_size) == ("", len(signed.body))  # refused: its size kept, not its body


def test_a_wrong_secret_is_refused(api, counter, alice):
    _assert_refused(post_event(api, event(secret="whsec_somebody_else")), alice)


def test_a_stale_timestamp_is_refused(api, counter, alice):
    _assert_refused(post_event(api, event(signed_at=int(time.time()) - 301)), alice)


def test_a_timestamp_far_in_the_future_is_refused(api, counter, alice):
    # Well past the 300 s tolerance: at +301 a second turning over before the check made it 300 (flaky).
    _assert_refused(post_event(api, event(signed_at=int(time.time()) + 330)), alice)


def test_a_timestamp_within_the_tolerance_is_accepted(api, counter, alice):
    assert post_event(api, event(signed_at=int(time.time()) - 250)).status_code == 200
    assert credits(alice) == 1


def test_a_missing_header_is_refused(api, counter, alice):
    _assert_refused(post_event(api, event(), signature=""), alice)


@pytest.mark.parametrize("header", ["garbage", "t=abc,v1=00", "v1=00", "t=123", "t=,v1=", "t=1,v1=é"])
def test_a_malformed_header_is_refused(api, counter, alice, header):
    _assert_refused(post_event(api, event(), signature=header), alice)


def test_no_configured_secret_refuses_everything(api, counter, alice, settings):
    signed = event()
    settings.PAYMENTS_WEBHOOK_SECRET = []

    _assert_refused(post_event(api, signed), alice)


def test_a_second_copy_is_a_duplicate_and_applies_nothing(api, counter, alice):
    first = event()
    again = event(event_id=first.event_id, created=first.payload["created"])  # re-signed like a provider retry

    assert post_event(api, first).json()["status"] == "processed"
    response = post_event(api, again)

    assert response.status_code == 200
    assert response.json() == {"status": "duplicate", "event_id": first.event_id}
    assert credits(alice) == 1
    assert InboundDelivery.objects.filter(event_id=first.event_id).count() == 2
    assert InboundEvent.objects.get().attempts == 1


def test_an_unknown_type_is_ignored(api, alice):
    signed = build_event("issuing_card.created", {"id": "ic_1"})

    response = post_event(api, signed)

    assert response.status_code == 200
    assert response.json() == {"status": "ignored", "event_id": signed.event_id}
    assert InboundEvent.objects.get().status == InboundEventStatus.IGNORED
    assert InboundDelivery.objects.get().outcome == "ignored"


def test_an_ignored_event_is_applied_when_it_comes_again_after_a_handler_appeared(api, alice):
    signed = build_event(TYPE, {"id": "pi_late"})
    assert post_event(api, signed).json()["status"] == "ignored"

    with handling(TYPE, lambda e: credits_add(alice, 5)):
        response = post_event(api, build_event(TYPE, {"id": "pi_late"}, event_id=signed.event_id))

    assert response.json()["status"] == "processed"
    assert credits(alice) == 5


def test_a_failing_handler_gives_500_and_a_later_redelivery_succeeds(api, alice):
    broken = {"yes": True}

    def handler(event):
        credits_add(alice, 1)  # rolled back when it raises
        if broken["yes"]:
            raise RuntimeError("database of a partner is down")

    signed = event()
    with handling(TYPE, handler):
        response = post_event(api, signed)

        assert response.status_code == 500
        assert response.json() == {
            "detail": "The event could not be processed; it was kept and is processed again when it is re-sent.",
            "code": "server_error",
        }
        assert "partner" not in response.content.decode()
        assert credits(alice) == 0
        stored = InboundEvent.objects.get()
        assert stored.status == InboundEventStatus.FAILED
        assert "RuntimeError: database of a partner is down" in stored.last_error
        assert InboundDelivery.objects.get().outcome == "failed"

        broken["yes"] = False
        retry = post_event(api, event(event_id=signed.event_id, created=signed.payload["created"]))

    assert retry.status_code == 200
    assert retry.json() == {"status": "processed", "event_id": signed.event_id}
    assert credits(alice) == 1
    stored.refresh_from_db()
    assert (stored.status, stored.attempts, stored.last_error) == (InboundEventStatus.PROCESSED, 2, "")


def test_an_event_older_than_one_applied_to_the_same_object_is_not_applied(api, counter, alice):
    now = int(time.time())
    newer = build_event(TYPE, {"id": "sub_same", "status": "active"}, created=now)
    older = build_event(TYPE, {"id": "sub_same", "status": "past_due"}, created=now - 60)
    other_object = build_event(TYPE, {"id": "sub_other"}, created=now - 60)

    assert post_event(api, newer).json()["status"] == "processed"
    response = post_event(api, older)
    assert post_event(api, other_object).json()["status"] == "processed"

    assert response.status_code == 200
    assert response.json() == {"status": "ignored", "event_id": older.event_id}
    assert [e.object["id"] for e in counter] == ["sub_same", "sub_other"]
    assert InboundEvent.objects.get(event_id=older.event_id).status == InboundEventStatus.SKIPPED
    assert credits(alice) == 2


def test_the_same_object_id_on_two_connected_accounts_is_two_objects(api, counter, alice):
    """A capability's id ("transfers") is the same on every connected account: an event of one account is not
    older than another account's."""
    now = int(time.time())
    first = build_event(TYPE, {"id": "transfers", "status": "active"}, created=now, account="acct_one")
    other = build_event(TYPE, {"id": "transfers", "status": "inactive"}, created=now - 60, account="acct_two")
    older = build_event(TYPE, {"id": "transfers", "status": "inactive"}, created=now - 60, account="acct_one")

    assert post_event(api, first).json()["status"] == "processed"
    assert post_event(api, other).json()["status"] == "processed"
    assert post_event(api, older).json()["status"] == "ignored"
    assert [e.account for e in counter] == ["acct_one", "acct_two"]


def test_a_failed_event_does_not_count_as_applied_for_ordering(api, alice):
    now = int(time.time())
    failing = build_event(TYPE, {"id": "pi_order"}, created=now)
    older = build_event(TYPE, {"id": "pi_order"}, created=now - 30)
    state = {"fail": True}

    def handler(event):
        if state["fail"] and event.id == failing.event_id:
            raise RuntimeError("boom")
        credits_add(alice, 1)

    with handling(TYPE, handler):
        assert post_event(api, failing).status_code == 500
        assert post_event(api, older).json()["status"] == "processed"

    assert credits(alice) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"type": "x", "created": 1, "data": {"object": {}}}',
        b'{"id": "evt_1", "created": 1, "data": {"object": {}}}',
        b'{"id": "evt_1", "type": "x", "created": "yesterday", "data": {"object": {}}}',
        b'{"id": "evt_1", "type": "x", "created": 1, "data": {}}',
        b'{"id": "evt_1", "type": "x", "created": 1, "data": {"object": {"id": "a\\u0000b"}}}',
    ],
)
def test_a_signed_body_that_is_not_an_event_is_400(api, counter, alice, body):
    header = signing.signature_header(body, ["whsec_current"])

    response = api.post(WEBHOOK_URL, data=body, content_type="application/json", HTTP_PAYMENTS_SIGNATURE=header)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_event"
    assert InboundEvent.objects.count() == 0
    assert InboundDelivery.objects.get().signature_valid is True
    assert credits(alice) == 0


def test_a_body_over_256_kib_is_413_and_still_recorded(api, counter, alice):
    signed = build_event(TYPE, {"id": "pi_big", "padding": "x" * (256 * 1024)})

    response = post_event(api, signed)

    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert credits(alice) == 0
    assert InboundEvent.objects.count() == 0
    delivery = InboundDelivery.objects.get()
    assert (delivery.outcome, delivery.body) == ("too_large", "")


def test_a_body_of_exactly_256_kib_is_read_whole(api, counter, alice):
    skeleton = build_event(TYPE, {"id": "pi_edge", "padding": ""}).body
    padding = 256 * 1024 - len(skeleton)
    signed = build_event(TYPE, {"id": "pi_edge", "padding": "x" * padding})
    assert len(signed.body) == 256 * 1024

    response = post_event(api, signed)

    assert response.status_code == 200, response.content
    assert credits(alice) == 1


def test_a_token_is_not_needed_and_a_bad_one_is_ignored(counter, alice):
    from tests.conftest import client_with_token

    response = post_event(client_with_token("not-a-valid-token"), event())

    assert response.status_code == 200
    assert "authorization" not in {k.lower() for k in InboundDelivery.objects.get().headers}
