"""Connected accounts (docs/decisions.md#connected-accounts): connect through OAuth, store, refresh, record health,
remove, re-encrypt."""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlencode
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from brands.models import ConnectedAccount, ConnectionHealth
from brands.models.connections import encrypt_token, token_cipher
from brands.providers.oauth import LOCAL_CODE_PREFIX, GrantRevoked, oauth_client
from brands.providers.social import PlatformRefused
from brands.selectors.brands import brand_of
from core.http.errors import DomainError, NotFound, ProviderUnavailable

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
    simulated: bool = False,
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
    connection.simulated = simulated
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


# --- Connecting through the platforms' OAuth (docs/decisions.md#connecting-accounts-oauth) --------------------

STATE_SALT = "brands.connected-accounts.oauth-state"


def _nonce_key(nonce: str) -> str:
    return f"brands:oauth-state:{nonce}"


def oauth_authorize(*, owner, brand_id: UUID, platform: str, redirect_uri: str, consent_url: str) -> dict:
    """Start connecting the brand's account on `platform`: the URL to send the owner's browser to, and the state
    that comes back with the code. The state is signed (user, brand, platform, redirect URI, a nonce) and the nonce
    lives in the cache for SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS: the callback takes it once."""
    brand = brand_of(owner, brand_id)
    redirect_uri = settings.SOCIAL_OAUTH_REDIRECT_URI or redirect_uri
    nonce = secrets.token_urlsafe(24)
    state = signing.dumps(
        {"u": str(owner.pk), "b": str(brand.id), "p": platform, "r": redirect_uri, "n": nonce}, salt=STATE_SALT
    )
    cache.set(_nonce_key(nonce), "1", timeout=settings.SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS)
    client = oauth_client(platform)
    return {
        "authorization_url": client.authorization_url(state=state, redirect_uri=redirect_uri, consent_url=consent_url),
        "state": state,
        "simulated": client.simulated,
    }


def oauth_state_peek(state: str) -> dict:
    """The state's content when its signature and age are good (the nonce is not taken): the local consent
    endpoint checks a state before it sends the browser back."""
    try:
        return signing.loads(state, salt=STATE_SALT, max_age=settings.SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS)
    except signing.SignatureExpired as exc:
        raise DomainError("The connection attempt expired: start again.", code="oauth_state_expired") from exc
    except signing.BadSignature as exc:
        raise DomainError("The state is not one this service issued.", code="oauth_state_invalid") from exc


def oauth_local_consent(*, state: str) -> str:
    """The local stand-in's consent page: it consents at once and sends the browser back to the state's redirect
    URI with a code only it accepts, as a platform would. 404 unless SOCIAL_OAUTH_PROVIDER is `local`."""
    if settings.SOCIAL_OAUTH_PROVIDER != "local":
        raise NotFound("There is no local consent page with this provider.")
    data = oauth_state_peek(state)
    query = urlencode({"code": f"{LOCAL_CODE_PREFIX}{secrets.token_urlsafe(16)}", "state": state})
    return f"{data['r']}?{query}"


def oauth_callback(*, code: str, state: str, error: str = "") -> list[ConnectedAccount]:
    """Finish a connection: check the state (signature, age, nonce taken once), exchange the code at the platform
    (no lock, no transaction held across it), then store each account the consent gave (docs/decisions.md
    #connecting-accounts-oauth). The accounts belong to the brand and user named in the state."""
    data = oauth_state_peek(state)
    if not cache.delete(_nonce_key(data["n"])):  # one atomic take: a replayed or raced state finds nothing
        raise DomainError("This connection attempt was already used: start again.", code="oauth_state_used")
    if error or not code:  # the owner refused consent at the platform (the state is used up all the same)
        raise DomainError(f"The platform gave no consent ({error or 'no code'}).", code="oauth_denied")
    owner = get_user_model().objects.filter(pk=data["u"], is_active=True).first()
    if owner is None:
        raise NotFound("No such brand.")
    brand = brand_of(owner, data["b"])  # still the user's brand
    client = oauth_client(data["p"])
    try:
        if client.simulated:
            grants = client.exchange(code=code, redirect_uri=data["r"], platform=data["p"], brand_id=str(brand.id))
        else:
            grants = client.exchange(code=code, redirect_uri=data["r"])
    except GrantRevoked as exc:
        raise DomainError(f"The platform refused the authorization code: {exc}", code="oauth_code_refused") from exc
    except PlatformRefused as exc:
        raise DomainError(f"The platform refused the connection: {exc.message}", code="oauth_refused") from exc
    if not grants:
        raise DomainError("The consent gave access to no account that can publish.", code="oauth_no_accounts")
    stored = []
    for grant in grants:
        connection = connection_store(
            owner=owner,
            brand_id=brand.id,
            platform=grant.platform,
            account_id=grant.account_id,
            account_name=grant.account_name,
            access_token=grant.access_token,
            refresh_token=grant.refresh_token,
            token_expires_at=grant.expires_at,
            simulated=grant.simulated,
        )
        stored.append(connection)
    return stored


# --- Refresh and health (docs/decisions.md#token-refresh-and-health) -------------------------------------------


def connection_refresh(*, connection_id: UUID) -> ConnectedAccount | None:
    """Refresh the connection's access token with its refresh token. The HTTP call holds no lock; the new tokens
    are written by one UPDATE conditional on the refresh token read before it, so of two refreshes racing, the
    second keeps what the first wrote. Returns the connection as stored after, or None when the grant is gone
    (the connection is then `token_expired` with the platform's message). Rate limits and outages raise."""
    connection = ConnectedAccount.objects.filter(id=connection_id).first()
    if connection is None:
        return None
    if not connection.refresh_token_encrypted:
        connection_record_health(
            connection_id=connection.id,
            health=ConnectionHealth.TOKEN_EXPIRED,
            error="The token cannot be refreshed: connect the account again.",
        )
        return None
    client = oauth_client(connection.platform, simulated=connection.simulated)
    try:
        tokens = client.refresh(platform=connection.platform, refresh_token=connection.refresh_token)
    except GrantRevoked as exc:
        connection_record_health(connection_id=connection.id, health=ConnectionHealth.TOKEN_EXPIRED, error=str(exc))
        logger.info("connection %s: refresh refused, marked token_expired", connection.id)
        return None
    now = timezone.now()
    ConnectedAccount.objects.filter(
        id=connection.id, refresh_token_encrypted=connection.refresh_token_encrypted
    ).update(
        access_token_encrypted=encrypt_token(tokens.access_token),
        refresh_token_encrypted=encrypt_token(tokens.refresh_token),
        token_expires_at=tokens.expires_at,
        health=ConnectionHealth.HEALTHY,
        last_error="",
        last_checked_at=now,
        updated_at=now,
    )
    logger.info("connection %s refreshed", connection.id)
    return ConnectedAccount.objects.filter(id=connection.id).first()


def connections_refresh_due(*, limit: int = 200) -> dict:
    """The beat's job: refresh the tokens that expire within SOCIAL_TOKEN_REFRESH_WINDOW_SECONDS; a token that
    cannot be refreshed (no refresh token) is marked `expiring`, or `token_expired` once past its expiry. Each
    connection on its own: an outage or rate limit on one is logged and left for the next run."""
    now = timezone.now()
    horizon = now + timedelta(seconds=settings.SOCIAL_TOKEN_REFRESH_WINDOW_SECONDS)
    due = ConnectedAccount.objects.filter(token_expires_at__lte=horizon).exclude(health=ConnectionHealth.TOKEN_EXPIRED)
    counts = {"refreshed": 0, "expired": 0, "expiring": 0, "failed": 0}
    for row in due.order_by("token_expires_at").values("id", "refresh_token_encrypted", "token_expires_at")[:limit]:
        if not row["refresh_token_encrypted"]:
            past = row["token_expires_at"] <= now
            health = ConnectionHealth.TOKEN_EXPIRED if past else ConnectionHealth.EXPIRING
            message = "The token expired" if past else "The token expires soon"
            connection_record_health(
                connection_id=row["id"], health=health, error=f"{message} and cannot be refreshed: reconnect."
            )
            counts["expired" if past else "expiring"] += 1
            continue
        try:
            refreshed = connection_refresh(connection_id=row["id"])
        except (ProviderUnavailable, PlatformRefused) as exc:
            logger.warning("connection %s: refresh failed (%s), tried again next run", row["id"], exc)
            counts["failed"] += 1
            continue
        counts["refreshed" if refreshed else "expired"] += 1
    return counts
