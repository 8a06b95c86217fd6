"""Connected accounts (docs/decisions.md#connected-accounts): tokens encrypted at rest with rotatable keys,
listed with their health and never shown, deleted by their owner only."""

from __future__ import annotations

import logging
import uuid

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.db import IntegrityError, transaction
from django.utils import timezone

from brands.models import ConnectedAccount, Publication
from brands.services.connections import connection_record_health, connection_store, connections_reencrypt
from tests.brands.factories import BrandFactory

pytestmark = pytest.mark.django_db

ACCESS, REFRESH = "EAAGm0PX4ZCpsBA-secret-access", "AQX-secret-refresh"


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme")


@pytest.fixture
def connection(alice, brand):
    return connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="facebook_page",
        account_id="104612345",
        account_name="Acme Outdoor",
        access_token=ACCESS,
        refresh_token=REFRESH,
    )


def test_tokens_are_encrypted_at_rest_and_read_back(connection):
    row = ConnectedAccount.objects.values("access_token_encrypted", "refresh_token_encrypted").get(id=connection.id)

    assert ACCESS not in row["access_token_encrypted"] and REFRESH not in row["refresh_token_encrypted"]
    fresh = ConnectedAccount.objects.get(id=connection.id)
    assert (fresh.access_token, fresh.refresh_token) == (ACCESS, REFRESH)
    assert ACCESS not in repr(fresh) + str(fresh)


def test_keys_rotate_old_tokens_stay_readable_and_reencrypt_drops_the_old_key(settings, brand, alice):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.CONNECTED_ACCOUNT_TOKEN_KEYS = [old]
    connection = connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="linkedin",
        account_id="urn:li:organization:5",
        account_name="Acme",
        access_token=ACCESS,
    )

    settings.CONNECTED_ACCOUNT_TOKEN_KEYS = [new, old]  # a new key first: old tokens still decrypt
    assert ConnectedAccount.objects.get(id=connection.id).access_token == ACCESS
    assert connections_reencrypt() == 1

    settings.CONNECTED_ACCOUNT_TOKEN_KEYS = [new]  # the old key dropped
    assert ConnectedAccount.objects.get(id=connection.id).access_token == ACCESS
    settings.CONNECTED_ACCOUNT_TOKEN_KEYS = [old]
    with pytest.raises(InvalidToken):
        ConnectedAccount.objects.get(id=connection.id).access_token  # noqa: B018


def test_connecting_the_same_account_again_replaces_its_tokens(alice, brand, connection):
    again = connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="facebook_page",
        account_id="104612345",
        account_name="Acme",
        access_token="new-access",
    )

    assert again.id == connection.id
    assert ConnectedAccount.objects.get(id=connection.id).access_token == "new-access"


def test_list_shows_health_and_never_a_token(alice_api, brand, connection, caplog):
    caplog.set_level(logging.DEBUG)
    connection_record_health(connection_id=connection.id, health="token_expired", error="Error validating access token")

    response = alice_api.get(f"/api/v1/brands/{brand.id}/connections")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["total"], body["has_more"], body["next_cursor"]) == (1, False, None)
    item = body["items"][0]
    assert item["id"] == str(connection.id)
    assert (item["platform"], item["account_id"], item["health"]) == ("facebook_page", "104612345", "token_expired")
    assert item["last_error"] == "Error validating access token" and item["last_checked_at"]
    assert ACCESS not in response.content.decode() and "token_encrypted" not in response.content.decode()
    assert REFRESH not in response.content.decode()
    assert ACCESS not in caplog.text


@pytest.mark.parametrize(
    ("who", "connection_id", "status"),
    [("bob", "own", 404), ("alice", "other", 404), ("alice", "own", 204)],
)
def test_delete_only_by_the_owner(alice_api, bob_api, brand, connection, who, connection_id, status):
    client = alice_api if who == "alice" else bob_api
    target = connection.id if connection_id == "own" else uuid.uuid4()

    response = client.delete(f"/api/v1/brands/{brand.id}/connections/{target}")

    assert response.status_code == status, response.content
    assert ConnectedAccount.objects.filter(id=connection.id).exists() is (status != 204)
    if status == 404:
        assert response.json()["code"] == "not_found"


def test_another_users_brand_lists_as_missing(bob_api, brand, connection):
    assert bob_api.get(f"/api/v1/brands/{brand.id}/connections").status_code == 404


def test_admin_lists_and_filters_without_tokens(admin_client, connection):
    pages = [
        admin_client.get("/admin/brands/connectedaccount/", secure=True),
        admin_client.get(
            "/admin/brands/connectedaccount/?platform__exact=facebook_page&health__exact=healthy", secure=True
        ),
        admin_client.get("/admin/brands/connectedaccount/", {"q": "Acme"}, secure=True),
        admin_client.get(f"/admin/brands/connectedaccount/{connection.pk}/change/", secure=True),
    ]

    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        assert ACCESS not in html and connection.access_token_encrypted not in html
    assert "104612345" in pages[0].content.decode()


@pytest.mark.parametrize(("second_status", "refused"), [("queued", True), ("succeeded", True), ("failed", False)])
def test_a_payload_is_confirmed_once_per_brand_by_the_database(brand, second_status, refused):
    def publication(status):
        return Publication.objects.create(
            brand=brand,
            creative_id=uuid.uuid4(),
            action="social_publish",
            platform="instagram",
            status=status,
            payload={},
            payload_hash="f" * 64,
            destination_id="ig-1",
            expires_at=timezone.now(),
        )

    publication("processing")
    publication("preflight")  # preflights of the same payload may wait side by side
    if refused:
        with pytest.raises(IntegrityError), transaction.atomic():
            publication(second_status)
    else:
        publication(second_status)
