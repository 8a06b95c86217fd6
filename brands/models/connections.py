"""Connected accounts: a brand's account at a social platform that publications are posted through
(docs/decisions.md#connected-accounts).

The platform's access and refresh tokens are stored encrypted (Fernet; MultiFernet over
CONNECTED_ACCOUNT_TOKEN_KEYS, the first key encrypts, every key decrypts, so keys rotate). The clear
tokens exist only in memory, through `access_token` / `refresh_token`; no log line, admin page or API
answer shows them.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from functools import cache

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings
from django.db import models

from brands.models.brand import Brand


class ConnectedPlatform(models.TextChoices):
    FACEBOOK_PAGE = "facebook_page", "Facebook Page"
    INSTAGRAM = "instagram", "Instagram professional account"
    LINKEDIN = "linkedin", "LinkedIn member or organization"


class ConnectionHealth(models.TextChoices):
    HEALTHY = "healthy", "Healthy: the last call with its token worked"
    EXPIRING = "expiring", "Expiring: the token expires soon and cannot be refreshed: reconnect before then"
    UNKNOWN = "unknown", "Unknown: not checked yet"
    TOKEN_EXPIRED = "token_expired", "The token expired or was revoked and could not be refreshed: reconnect"
    ERROR = "error", "The platform refused the last call (see last_error)"


@cache
def _cipher(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys])


def token_cipher() -> MultiFernet:
    """The token cipher. Without CONNECTED_ACCOUNT_TOKEN_KEYS (development, tests) one key is derived from
    SECRET_KEY; a production deployment should set its own keys (docs/operations.md#connected-social-accounts)."""
    keys = tuple(settings.CONNECTED_ACCOUNT_TOKEN_KEYS)
    if not keys:
        digest = hashlib.sha256(b"connected-account-tokens:" + settings.SECRET_KEY.encode()).digest()
        keys = (base64.urlsafe_b64encode(digest).decode(),)
    return _cipher(keys)


def encrypt_token(value: str) -> str:
    return token_cipher().encrypt(value.encode()).decode() if value else ""


def decrypt_token(value: str) -> str:
    return token_cipher().decrypt(value.encode()).decode() if value else ""


class ConnectedAccount(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="connected_accounts")
    platform = models.CharField(max_length=20, choices=ConnectedPlatform.choices)
    account_id = models.CharField(max_length=200, help_text="The platform's id: page id, IG user id or author URN.")
    account_name = models.CharField(max_length=200, blank=True)
    access_token_encrypted = models.TextField(help_text="Fernet token of the access token; never shown.")
    refresh_token_encrypted = models.TextField(blank=True, help_text="Fernet token of the refresh token; never shown.")
    token_expires_at = models.DateTimeField(null=True, blank=True)
    health = models.CharField(max_length=20, choices=ConnectionHealth.choices, default=ConnectionHealth.UNKNOWN)
    last_error = models.TextField(blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    simulated = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Connected through the local OAuth stand-in: it posts to no platform.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "platform", "account_id"], name="connected_account_once_per_brand"
            ),
        ]
        indexes = [models.Index(fields=["brand", "-created_at", "-id"], name="connected_account_brand_list")]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} {self.account_name or self.account_id}"

    def __repr__(self) -> str:  # never the tokens, even encrypted
        return f"<ConnectedAccount {self.id} {self.platform} {self.account_id}>"

    @property
    def access_token(self) -> str:
        return decrypt_token(self.access_token_encrypted)

    @access_token.setter
    def access_token(self, value: str) -> None:
        self.access_token_encrypted = encrypt_token(value)

    @property
    def refresh_token(self) -> str:
        return decrypt_token(self.refresh_token_encrypted)

    @refresh_token.setter
    def refresh_token(self, value: str) -> None:
        self.refresh_token_encrypted = encrypt_token(value)
