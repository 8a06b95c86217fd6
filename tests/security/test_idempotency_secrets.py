"""A "shown once" secret stays shown once under `Idempotency-Key`: the stored response is encrypted under
a key only the client's Idempotency-Key (with SECRET_KEY) opens, and an API key's create is not replayed
once the key is revoked (see docs/decisions.md#retries-and-idempotency-key)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.http.idempotency import idempotency_keys_prune
from core.models import IdempotencyKey

pytestmark = pytest.mark.django_db

KEYS = "/api/v1/auth/api-keys"


def create_key(api, idempotency_key: str = "create-ci-key"):
    return api.post(KEYS, {"name": "ci"}, HTTP_IDEMPOTENCY_KEY=idempotency_key)


def stored_row_text(idempotency_key: str) -> str:
    return str(IdempotencyKey.objects.filter(key=idempotency_key).values().get())


def test_the_stored_response_holds_no_raw_api_key_and_still_replays(alice_api):
    created = create_key(alice_api)
    raw = created.json()["key"]

    row = stored_row_text("create-ci-key")
    assert raw not in row and raw.split("_", 2)[2] not in row
    assert created.json()["prefix"] not in IdempotencyKey.objects.get(key="create-ci-key").response_body

    replay = create_key(alice_api)
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert replay.json() == created.json()


def test_a_replay_after_revocation_hands_out_no_key(alice_api):
    created = create_key(alice_api)
    raw = created.json()["key"]
    assert alice_api.delete(f"{KEYS}/{created.json()['id']}").status_code == 204

    replay = create_key(alice_api)

    assert replay.status_code == 409
    assert replay.json()["code"] == "idempotency_replay_refused"
    assert raw not in replay.content.decode()


def test_every_stored_response_is_encrypted(alice_api):
    alice_api.post("/api/v1/brands", {"name": "Acme"}, HTTP_IDEMPOTENCY_KEY="brand-1")
    create_key(alice_api, "key-1")

    bodies = list(IdempotencyKey.objects.exclude(response_status=None).values_list("response_body", flat=True))
    assert bodies and all(not body.lstrip().startswith(("{", "[")) for body in bodies)
    assert "Acme" not in " ".join(bodies)


def test_a_stolen_row_is_no_use_without_the_clients_idempotency_key(alice_api, bob, bob_api):
    create_key(alice_api, "alices-key")
    row = IdempotencyKey.objects.get(key="alices-key")
    # The same ciphertext under another user and key does not open (the key and user are bound in).
    IdempotencyKey.objects.create(
        user=bob,
        key="bobs-key",
        fingerprint=row.fingerprint,  # method, path and body: the same request of bob's
        request=row.request,
        locked_at=row.locked_at,
        response_status=row.response_status,
        response_body=row.response_body,
        response_headers=row.response_headers,
        expires_at=row.expires_at,
    )

    replay = create_key(bob_api, "bobs-key")

    assert replay.status_code == 409 and "bmk_" not in replay.content.decode()


def test_plaintext_rows_of_an_older_release_are_pruned(alice):
    now = timezone.now()
    IdempotencyKey.objects.create(
        user=alice,
        key="legacy",
        fingerprint="0" * 64,
        request="POST /api/v1/auth/api-keys",
        locked_at=now,
        response_status=201,
        response_body='{"key": "bmk_abcdefgh_secret"}',
        expires_at=now + timedelta(hours=23),
    )

    idempotency_keys_prune()

    assert not IdempotencyKey.objects.filter(key="legacy").exists()


def test_an_agents_signing_secret_is_not_stored_in_the_clear(alice_api):
    created = alice_api.post(
        "/api/v1/agents", {"name": "n", "endpoint_url": "https://a.example.com/h"}, HTTP_IDEMPOTENCY_KEY="agent-1"
    )
    assert created.status_code == 201, created.content
    secret = created.json()["signing_secret"]

    assert secret not in stored_row_text("agent-1")
    replay = alice_api.post(
        "/api/v1/agents", {"name": "n", "endpoint_url": "https://a.example.com/h"}, HTTP_IDEMPOTENCY_KEY="agent-1"
    )
    assert replay.json()["signing_secret"] == secret
