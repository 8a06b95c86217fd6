from __future__ import annotations

import base64
import io
import threading
import uuid
from urllib.parse import urlsplit

import pytest
from django.core.files.storage import default_storage
from django.db import connections
from PIL import Image

from assistant.models import CreditTransaction, ImageGeneration
from assistant.providers.images.local import render_png
from tests.conftest import client_with_token, jwt_for
from tests.support.credits import credits_of, credits_set
from tests.support.factories import UserFactory

GENERATE = "/api/v1/allmodelchat/generate/image"


def _body(**overrides):
    return {"prompt": "A lighthouse at dawn, teal and orange", "conversation_id": str(uuid.uuid4()), **overrides}


def _png(width=8, height=8) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.django_db
def test_it_draws_stores_and_serves_a_png_for_one_credit(alice_api, alice):
    credits_set(alice, 3)

    response = alice_api.post(GENERATE, _body(), format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["model"] == "local-canvas-1"
    assert body["credit_cost"] == 1
    url = urlsplit(body["url"])
    assert url.scheme == "https" and url.netloc == "testserver"
    assert url.path.startswith("/media/generated/") and url.path.endswith(".png")

    served = alice_api.get(url.path)
    assert served.status_code == 200
    content = b"".join(served.streaming_content)
    assert content == render_png("A lighthouse at dawn, teal and orange")
    assert Image.open(io.BytesIO(content)).size == (512, 512)

    alice.refresh_from_db()
    assert credits_of(alice) == 2
    generation = ImageGeneration.objects.get(user=alice)
    assert generation.status == "succeeded"
    assert default_storage.exists(generation.storage_name)
    [debit] = CreditTransaction.objects.filter(user=alice)
    assert (debit.delta, debit.kind, debit.balance_after, debit.reference) == (
        -1,
        "image_generation",
        2,
        str(generation.id),
    )


@pytest.mark.django_db
def test_without_enough_credits_it_is_402_and_changes_nothing(alice_api, alice):
    response = alice_api.post(GENERATE, _body(), format="json")

    assert response.status_code == 402
    assert response.json() == {"detail": "Not enough credits for this operation.", "code": "insufficient_credits"}
    assert not ImageGeneration.objects.exists()
    assert not CreditTransaction.objects.exists()


@pytest.mark.django_db
def test_a_model_whose_provider_is_not_configured_is_503_and_takes_nothing(alice_api, alice, settings):
    settings.OPENAI_API_KEY = ""
    credits_set(alice, 10)

    response = alice_api.post(GENERATE, _body(model="openai-gpt-image-1"), format="json")

    assert response.status_code == 503
    assert response.json()["code"] == "provider_unavailable"
    alice.refresh_from_db()
    assert credits_of(alice) == 10
    assert not ImageGeneration.objects.exists()


@pytest.mark.django_db
def test_a_failing_provider_is_502_and_the_credits_come_back(alice_api, alice, fake_openai):
    credits_set(alice, 10)
    fake_openai.replies = [(400, {"error": {"message": "Your prompt was rejected by the safety system."}})]

    response = alice_api.post(GENERATE, _body(model="openai-gpt-image-1"), format="json")

    assert response.status_code == 502
    assert response.json()["code"] == "provider_error"
    alice.refresh_from_db()
    assert credits_of(alice) == 10
    assert ImageGeneration.objects.get().status == "failed"
    ledger = list(CreditTransaction.objects.order_by("created_at").values_list("kind", "delta", "balance_after"))
    assert ledger == [("image_generation", -5, 5), ("image_refund", 5, 10)]


@pytest.mark.django_db
def test_the_openai_model_stores_the_providers_png(alice_api, alice, fake_openai):
    credits_set(alice, 5)
    png = _png()
    fake_openai.replies = [(200, {"created": 1, "data": [{"b64_json": base64.b64encode(png).decode()}]})]

    response = alice_api.post(GENERATE, _body(model="openai-gpt-image-1"), format="json")

    assert response.status_code == 200, response.content
    assert response.json()["credit_cost"] == 5
    assert fake_openai.requests[0]["path"] == "/v1/images/generations"
    assert fake_openai.requests[0]["body"] == {
        "model": "gpt-image-1",
        "prompt": "A lighthouse at dawn, teal and orange",
        "n": 1,
        "size": "1024x1024",
    }
    served = alice_api.get(urlsplit(response.json()["url"]).path)
    assert b"".join(served.streaming_content) == png
    alice.refresh_from_db()
    assert credits_of(alice) == 0


@pytest.mark.django_db
def test_models_and_credits(alice_api, alice, settings):
    settings.OPENAI_API_KEY = ""
    credits_set(alice, 12)

    models = alice_api.get("/api/v1/allmodelchat/models").json()
    credits = alice_api.get("/api/v1/allmodelchat/credits").json()

    assert models["total"] == 2 and models["has_more"] is False
    assert [(m["id"], m["provider"], m["credit_cost"], m["default"], m["available"]) for m in models["items"]] == [
        ("local-canvas-1", "local", 1, True, True),
        ("openai-gpt-image-1", "openai", 5, False, False),
    ]
    assert credits["credits"] == 12


@pytest.mark.django_db
def test_openai_is_the_default_model_when_the_server_is_set_up_for_it(alice_api, settings):
    settings.IMAGE_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-configured"

    items = alice_api.get("/api/v1/allmodelchat/models").json()["items"]

    assert [(m["id"], m["default"], m["available"]) for m in items] == [
        ("local-canvas-1", False, True),
        ("openai-gpt-image-1", True, True),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "loc", "type_"),
    [
        ({"conversation_id": str(uuid.uuid4())}, ["body", "prompt"], "missing"),
        (_body(prompt=""), ["body", "prompt"], "string_too_short"),
        (_body(prompt="x" * 4001), ["body", "prompt"], "string_too_long"),
        (_body(model="dall-e-9"), ["body", "model"], "literal_error"),
        (_body(conversation_id="nope"), ["body", "conversation_id"], "uuid_parsing"),
        ({"prompt": "a cat"}, ["body", "conversation_id"], "missing"),
    ],
)
def test_bad_requests_are_422_and_take_nothing(alice_api, alice, body, loc, type_):
    credits_set(alice, 5)

    response = alice_api.post(GENERATE, body, format="json")

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]
    alice.refresh_from_db()
    assert credits_of(alice) == 5


@pytest.mark.django_db
def test_anonymous_is_401(api):
    assert api.post(GENERATE, _body(), format="json").status_code == 401
    assert api.get("/api/v1/allmodelchat/credits").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_30_concurrent_generations_with_credits_for_10():
    user = UserFactory(credits=10)
    token = jwt_for(user)
    start = threading.Barrier(30)
    statuses: list[int] = []
    lock = threading.Lock()

    def generate(n: int) -> None:
        client = client_with_token(token)
        try:
            start.wait()
            response = client.post(GENERATE, _body(prompt=f"poster number {n}"), format="json")
            with lock:
                statuses.append(response.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=generate, args=(n,)) for n in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [200] * 10 + [402] * 20
    assert credits_of(user) == 0
    assert ImageGeneration.objects.filter(user=user, status="succeeded").count() == 10
    assert ImageGeneration.objects.filter(user=user).count() == 10
    balances = sorted(CreditTransaction.objects.filter(user=user).values_list("balance_after", flat=True))
    assert balances == list(range(10))  # each debit left a distinct balance, down to 0, never below


@pytest.mark.django_db
def test_the_schema_offers_only_the_models_this_server_can_use(api, settings):
    def offered():
        schema = api.get("/openapi.json").json()
        request = schema["paths"]["/api/v1/allmodelchat/generate/image"]["post"]["requestBody"]
        ref = request["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        model = schema["components"]["schemas"][ref]["properties"]["model"]
        enum_ref = model["allOf"][0]["$ref"] if "allOf" in model else model.get("$ref")
        return schema["components"]["schemas"][enum_ref.rsplit("/", 1)[1]]["enum"] if enum_ref else model["enum"]

    settings.OPENAI_API_KEY = ""
    assert offered() == ["local-canvas-1"]
    settings.OPENAI_API_KEY = "sk-configured"
    assert offered() == ["local-canvas-1", "openai-gpt-image-1"]
