from __future__ import annotations

import json

import pytest

from assistant.models import Assistant, AssistantMessage, CreditTransaction
from tests.assistant.factories import AssistantFactory, AssistantMessageFactory
from tests.brands.factories import BrandFactory
from tests.support.credits import credits_of, credits_set

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/assistant/messages"
CONVERSATIONS = "/api/v1/assistant/conversations"
ME = "/api/v1/assistant/me"


def test_a_message_stores_the_question_and_the_reply(alice_api, alice):
    response = alice_api.post(MESSAGES, {"content": "How many credits do I have?"}, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["user_message"]["role"] == "user"
    assert body["user_message"]["content"] == "How many credits do I have?"
    assert body["user_message"]["message_type"] == "text"
    assert body["assistant_message"]["role"] == "assistant"
    assert body["assistant_message"]["content"].startswith("(Local model) You have 0 credits")
    assert body["assistant_message"]["attachments"] == []
    assistant = Assistant.objects.get(user=alice)
    assert sorted(assistant.messages.values_list("role", flat=True)) == ["assistant", "user"]


def test_the_conversation_lists_the_reply_above_the_question(alice_api):
    sent = alice_api.post(MESSAGES, {"content": "hello"}, format="json").json()

    listed = alice_api.get(CONVERSATIONS).json()

    assert [m["id"] for m in listed["messages"]] == [sent["assistant_message"]["id"], sent["user_message"]["id"]]
    assert listed["total"] == 2
    assert listed["has_more"] is False


def test_image_attachments_make_an_image_message(alice_api):
    response = alice_api.post(
        MESSAGES,
        {"content": "What do you think?", "attachments": [{"type": "image", "url": "https://cdn.example/a.png"}]},
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["user_message"]["message_type"] == "image"
    assert response.json()["user_message"]["attachments"] == [{"type": "image", "url": "https://cdn.example/a.png"}]


def test_the_reply_sees_the_earlier_conversation(alice_api):
    alice_api.post(MESSAGES, {"content": "Sustainable packaging"}, format="json")

    reply = alice_api.post(MESSAGES, {"content": "Recycled paper options"}, format="json").json()["assistant_message"]

    assert "message 2 of our conversation" in reply["content"]


def test_paging_45_messages_by_20(alice_api, alice):
    assistant = AssistantFactory(user=alice)
    created = AssistantMessageFactory.create_batch(45, assistant=assistant)
    newest_first = [str(m.id) for m in reversed(created)]

    pages = [alice_api.get(CONVERSATIONS, {"limit": 20, "offset": offset}).json() for offset in (0, 20, 40)]

    assert [len(p["messages"]) for p in pages] == [20, 20, 5]
    assert [p["has_more"] for p in pages] == [True, True, False]
    assert [p["total"] for p in pages] == [45, 45, 45]
    assert [m["id"] for p in pages for m in p["messages"]] == newest_first

    assert alice_api.delete(ME).status_code == 204
    assert alice_api.get(CONVERSATIONS).json() == {
        "messages": [],
        "has_more": False,
        "total": 0,
        "next_cursor": None,
        "total_exact": True,
    }
    assert not AssistantMessage.objects.filter(assistant__user=alice).exists()


def test_a_cursor_pages_through_the_conversation_to_its_end(alice_api, alice):
    """A generic client follows `next_cursor` until it is null: each page is the one after the last, and the
    pages hold every message once (a cursor the list ignored would loop on page 1 forever)."""
    created = AssistantMessageFactory.create_batch(45, assistant=AssistantFactory(user=alice))
    seen, cursor, pages = [], None, 0
    while True:
        body = alice_api.get(CONVERSATIONS, {"limit": 20, **({"cursor": cursor} if cursor else {})}).json()
        seen += [m["id"] for m in body["messages"]]
        pages += 1
        assert body["total"] == 45 and body["has_more"] is (body["next_cursor"] is not None)
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert (pages, seen) == (3, [str(m.id) for m in reversed(created)])


@pytest.mark.parametrize(
    ("params", "loc"),
    [({"cursor": "not-a-cursor"}, ["query", "cursor"]), ({"cursor": "WyJ4Il0", "offset": 5}, ["query", "offset"])],
)
def test_a_cursor_not_of_this_list_or_with_an_offset_is_422(alice_api, alice, params, loc):
    response = alice_api.get(CONVERSATIONS, params)

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [loc]


def test_default_page_is_20(alice_api, alice):
    AssistantMessageFactory.create_batch(21, assistant=AssistantFactory(user=alice))

    body = alice_api.get(CONVERSATIONS).json()

    assert len(body["messages"]) == 20
    assert body["has_more"] is True


@pytest.mark.parametrize(
    ("params", "loc", "type_"),
    [
        ({"limit": 0}, ["query", "limit"], "greater_than_equal"),
        ({"limit": 101}, ["query", "limit"], "less_than_equal"),
        ({"offset": -1}, ["query", "offset"], "greater_than_equal"),
        ({"limit": "x"}, ["query", "limit"], "int_parsing"),
    ],
)
def test_paging_parameters_are_validated(alice_api, params, loc, type_):
    response = alice_api.get(CONVERSATIONS, params)

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]


def test_the_list_costs_the_same_queries_for_1_or_25_messages(alice_api, alice, django_assert_num_queries):
    assistant = AssistantFactory(user=alice)
    AssistantMessageFactory(assistant=assistant)
    alice_api.get(CONVERSATIONS)  # warms the platform's cached rate-limit overrides
    with django_assert_num_queries(3):  # the user (JWT), the count, the page
        assert len(alice_api.get(CONVERSATIONS).json()["messages"]) == 1

    AssistantMessageFactory.create_batch(24, assistant=assistant)
    with django_assert_num_queries(3):
        assert len(alice_api.get(CONVERSATIONS, {"limit": 25}).json()["messages"]) == 25


def test_another_users_conversation_is_not_listed_or_deleted(alice_api, bob):
    AssistantMessageFactory.create_batch(3, assistant=AssistantFactory(user=bob))

    assert alice_api.get(CONVERSATIONS).json()["total"] == 0
    assert alice_api.delete(ME).status_code == 204
    assert AssistantMessage.objects.filter(assistant__user=bob).count() == 3


def test_delete_without_an_assistant_is_204_and_a_new_message_starts_fresh(alice_api, alice):
    assert alice_api.delete(ME).status_code == 204

    alice_api.post(MESSAGES, {"content": "first"}, format="json")
    old = Assistant.objects.get(user=alice).id
    assert alice_api.delete(ME).status_code == 204
    assert not Assistant.objects.filter(user=alice).exists()

    alice_api.post(MESSAGES, {"content": "again"}, format="json")
    fresh = Assistant.objects.get(user=alice)
    assert fresh.id != old
    assert fresh.messages.count() == 2


@pytest.mark.parametrize(
    ("body", "loc", "type_"),
    [
        ({}, ["body", "content"], "missing"),
        ({"content": ""}, ["body", "content"], "string_too_short"),
        ({"content": "x" * 4001}, ["body", "content"], "string_too_long"),
        (
            {"content": "hi", "attachments": [{"type": "video", "url": "https://a.test/v"}]},
            ["body", "attachments", 0, "type"],
            "literal_error",
        ),
        (
            {"content": "hi", "attachments": [{"type": "link", "url": "nope"}]},
            ["body", "attachments", 0, "url"],
            "url_parsing",
        ),
    ],
)
def test_bad_messages_are_422_and_store_nothing(alice_api, alice, body, loc, type_):
    response = alice_api.post(MESSAGES, body, format="json")

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]
    assert not Assistant.objects.filter(user=alice).exists()


def test_a_failing_language_model_stores_nothing_and_gives_the_credits_back(alice_api, alice, settings, fake_openai):
    settings.LLM_PROVIDER = "openai"
    credits_set(alice, 3)
    fake_openai.replies = [(500, {"error": {"message": "overloaded"}})]

    response = alice_api.post(MESSAGES, {"content": "hello"}, format="json")

    assert response.status_code == 502
    assert response.json()["code"] == "provider_error"
    assert not Assistant.objects.filter(user=alice).exists()
    charge, refund = CreditTransaction.objects.filter(user=alice).order_by("created_at", "kind")
    assert (charge.kind, charge.delta, refund.kind, refund.delta) == ("assistant_message", -1, "assistant_refund", 1)
    assert refund.reference == charge.reference and credits_of(alice) == 3


def test_a_message_to_a_remote_model_costs_its_credits(alice_api, alice, settings, fake_openai):
    settings.LLM_PROVIDER, settings.ASSISTANT_MESSAGE_CREDITS = "openai", 2
    credits_set(alice, 5)
    fake_openai.replies = [(200, {"model": "gpt-test", "choices": [{"message": {"content": "Answer."}}]})]

    response = alice_api.post(MESSAGES, {"content": "hello"}, format="json")

    assert response.status_code == 201, response.content
    assert credits_of(alice) == 3
    [charge] = CreditTransaction.objects.filter(user=alice)
    assert (charge.kind, charge.delta, charge.balance_after) == ("assistant_message", -2, 3)


def test_a_message_the_balance_cannot_pay_is_402_and_the_model_is_not_called(alice_api, alice, settings, fake_openai):
    settings.LLM_PROVIDER, settings.ASSISTANT_MESSAGE_CREDITS = "openai", 2
    credits_set(alice, 1)

    response = alice_api.post(MESSAGES, {"content": "hello"}, format="json")

    assert (response.status_code, response.json()["code"]) == (402, "insufficient_credits")
    assert fake_openai.requests == []
    assert credits_of(alice) == 1 and not CreditTransaction.objects.exists()
    assert not Assistant.objects.filter(user=alice).exists()


def test_a_message_to_the_local_model_is_free(alice_api, alice):
    response = alice_api.post(MESSAGES, {"content": "hello"}, format="json")

    assert response.status_code == 201
    assert credits_of(alice) == 0 and not CreditTransaction.objects.exists()


def test_the_openai_provider_gets_the_history_and_the_users_facts(alice_api, alice, settings, fake_openai):
    settings.LLM_PROVIDER = "openai"
    credits_set(alice, 1)
    BrandFactory(owner=alice, name="Acme", domain="acme.example", industry="Retail")
    AssistantMessageFactory(assistant=AssistantFactory(user=alice), role="user", content="earlier question")
    fake_openai.replies = [(200, {"model": "gpt-test", "choices": [{"message": {"content": "Remote answer."}}]})]

    response = alice_api.post(MESSAGES, {"content": "new question"}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["assistant_message"]["content"] == "Remote answer."
    [request] = fake_openai.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer sk-test-key"
    sent = request["body"]["messages"]
    assert sent[0]["role"] == "system" and "- brands: Acme (acme.example, Retail)" in sent[0]["content"]
    # No personal data of the user's reaches the model: not the address, nor its local part.
    assert "alice" not in json.dumps(request["body"]).casefold()
    assert sent[1:] == [{"role": "user", "content": "earlier question"}, {"role": "user", "content": "new question"}]


def test_anonymous_is_401(api):
    assert api.get(CONVERSATIONS).status_code == 401
    assert api.post(MESSAGES, {"content": "x"}, format="json").status_code == 401
    assert api.delete(ME).status_code == 401
