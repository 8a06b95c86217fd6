"""Connected accounts (docs/decisions.md#connected-accounts): store, record health, remove, re-encrypt."""

from __future__ import annotations

import logging
from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from brands.models import ConnectedAccount, ConnectionHealth
from brands.models.connections import token_cipher
from brands.selectors.brands import brand_of
from core.http.errors import NotFound

logger = logging.getLogger(__name__)

LAST_ERROR_MAX_CHARS = 500


@transaction.atomic
def connection_store(
    *,
    owner,
    brand_id: UUID,
    platform: str,
    account_id: str,
    account_name: str,
    access_token: str,
    refresh_token: str = "",
    token_expires_at: datetime | None = None,
) -> ConnectedAccount:
    """Create the brand's connection to this platform account, or give an existing one its new tokens
    (connecting the same account again replaces them). It starts healthy: the platform just issued them."""
    brand = brand_of(owner, brand_id, lock=True)
    connection = ConnectedAccount.objects.filter(brand=brand, platform=platform, account_id=account_id).first()
    if connection is None:
        connection = ConnectedAccount(brand=brand, platform=platform, account_id=account_id)
    connection.account_name = account_name
    connection.access_token = access_token
    connection.refresh_token = refresh_token
    connection.token_expires_at = token_expires_at
    connection.health = ConnectionHealth.HEALTHY
    connection.last_error = ""
    connection.last_checked_at = timezone.now()
    connection.save()
    logger.info("connection %s stored for brand %s (%s)", connection.id, brand.id, platform)
    return connection


def connection_record_health(*, connection_id: UUID, health: str, error: str = "") -> None:
    """Record the outcome of a call made with the connection's token (one short UPDATE, after the call).
    `error` is the platform's message, never a token."""
    ConnectedAccount.objects.filter(id=connection_id).update(
        health=health,
        last_error=error[:LAST_ERROR_MAX_CHARS],
        last_checked_at=timezone.now(),
        updated_at=timezone.now(),
    )


@transaction.atomic
def connection_delete(*, owner, brand_id: UUID, connection_id: UUID) -> None:
    """Forget the connection and its tokens. (Revoking the grant at the platform is the owner's, in the
    platform's settings.)"""
    brand = brand_of(owner, brand_id)
    deleted, _ = ConnectedAccount.objects.filter(brand=brand, id=connection_id).delete()
    if not deleted:
        raise NotFound("No such connection.")


def connections_reencrypt(*, batch: int = 500) -> int:
    """Encrypt every stored token again with the first key of CONNECTED_ACCOUNT_TOKEN_KEYS (MultiFernet.rotate),
    so that an old key can be dropped. Row by row, each in its own short UPDATE. Returns how many rows."""
    cipher = token_cipher()
    done = 0
    for row in (
        ConnectedAccount.objects.order_by("id")
        .values("id", "access_token_encrypted", "refresh_token_encrypted")
        .iterator(batch)
    ):
        ConnectedAccount.objects.filter(id=row["id"]).update(
            access_token_encrypted=cipher.rotate(row["access_token_encrypted"].encode()).decode()
            if row["access_token_encrypted"]
            else "",
            refresh_token_encrypted=cipher.rotate(row["refresh_token_encrypted"].encode()).decode()
            if row["refresh_token_encrypted"]
            else "",
        )
        done += 1
    return done
