from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from payments.provider_events import build_event
from tests.support.credits import credits_add, credits_of
from tests.webhooks_app.conftest import handling, post_event
from webhooks_app.models import InboundEvent, InboundEventStatus

pytestmark = pytest.mark.django_db


def test_reprocess_payment_events_applies_failed_events_with_progress(api, alice):
    state = {"broken": True}

    def handler(event):
        if state["broken"]:
            raise RuntimeError("not yet")
        credits_add(alice, 1)

    first = build_event("test.reprocess", {"id": "pi_r1"})
    second = build_event("test.reprocess", {"id": "pi_r2"})
    with handling("test.reprocess", handler):
        assert post_event(api, first).status_code == 500
        assert post_event(api, second).status_code == 500

        failing_out = StringIO()
        with pytest.raises(CommandError, match="2 event"):
            call_command("reprocess_payment_events", stdout=failing_out)
        assert "[1/2]" in failing_out.getvalue() and "RuntimeError: not yet" in failing_out.getvalue()

        state["broken"] = False
        out = StringIO()
        call_command("reprocess_payment_events", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0] == f"[1/2] {first.event_id} test.reprocess: processed"
    assert lines[1] == f"[2/2] {second.event_id} test.reprocess: processed"
    assert lines[2] == "Done: 2 processed."
    alice.refresh_from_db()
    assert credits_of(alice) == 2
    assert set(InboundEvent.objects.values_list("status", flat=True)) == {InboundEventStatus.PROCESSED}

    again = StringIO()
    call_command("reprocess_payment_events", stdout=again)
    assert again.getvalue().strip() == "No failed events to re-process."


def test_reprocess_by_event_id_never_applies_a_processed_event_twice(api, alice):
    def handler(event):
        credits_add(alice, 1)

    signed = build_event("test.reprocess", {"id": "pi_r3"})
    with handling("test.reprocess", handler):
        post_event(api, signed)
        out = StringIO()
        call_command("reprocess_payment_events", signed.event_id, stdout=out)

    assert f"{signed.event_id} test.reprocess: duplicate" in out.getvalue()
    alice.refresh_from_db()
    assert credits_of(alice) == 1


def test_reprocess_refuses_unknown_event_ids():
    with pytest.raises(CommandError, match="evt_missing"):
        call_command("reprocess_payment_events", "evt_missing", stdout=StringIO())
