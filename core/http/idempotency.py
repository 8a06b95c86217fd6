"""`Idempotency-Key`: a retried POST never doubles its effect (Stripe's semantics).

Put `@idempotent` on a view method that creates or moves something. It runs inside DRF's dispatch,
after authentication and permissions, so a key belongs to the authenticated user (an API key's
requests use its user's keys). Without the header the view runs as before.

With the header (1..255 printable ASCII characters, else 422 at loc ["header", "Idempotency-Key"]):

1. The key is claimed by INSERTing (user, key) in its own short transaction, committed before the view
   runs; the unique constraint lets exactly one concurrent copy win, on PostgreSQL and on SQLite.
2. A copy that loses finds the row: a different request (method, path, query or canonical JSON body)
   → 422 `idempotency_key_reused`; the first still in flight → 409 `idempotency_in_progress`;
   finished → the stored response again, with `Idempotent-Replayed: true`.
3. The view's response is stored for 24 h from the first request when it is final: every 2xx, and
   every 4xx the view decided (400, 402, 403, 404, 409, ...) except 422 and 429. A 422 (the input was
   refused before anything ran), a 429, any 5xx and any exception release the claim, so a retry runs
   the request again, as Stripe does for validation failures and server errors.

The database never holds a response in the clear: it may carry a secret shown once (a raw API key, a
signing secret). The response is encrypted (AES-256-GCM) under a key derived from SECRET_KEY, the user
and the client's Idempotency-Key, so only that client's retry opens it; a row copied to another user or
key does not. A view may also make a replay depend on its object staying live (`replay_only_while`):
a create whose API key was revoked since is refused with 409 `idempotency_replay_refused`.
See docs/decisions.md#retries-and-idempotency-key.

A claim whose request died without releasing it (the process was killed) is taken over after
IN_FLIGHT_TIMEOUT, well past any request's life (gunicorn kills a worker after 30 s). A view marked
`atomic=True` commits its work and its stored response together, so that take-over never runs a create
twice; the others are views that call a provider, made safe to repeat by their own domain claim.
Expired rows count as absent; `idempotency_keys_prune` (beat, hourly) deletes them.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable
from datetime import timedelta

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from core.api.validation import RequestValidationError, error
from core.http.errors import Conflict
from core.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_LENGTH = 255
# Printable ASCII, without leading or trailing spaces (HTTP strips those from header values anyway).
PATTERN = r"^[!-~]([ -~]*[!-~])?$"
TTL = timedelta(hours=24)
IN_FLIGHT_TIMEOUT = timedelta(minutes=5)
STORED_HEADERS = ("Location",)
_NOT_STORED = {422, 429}
_LOC = ["header", HEADER]
_PATTERN = re.compile(PATTERN)


# The stored body's format: this prefix, then base64 of a 12-byte nonce and the AES-GCM ciphertext.
SEALED_PREFIX = "aesgcm1:"
# name → check(object_id) -> bool: is the object a replay depends on still live (`replay_only_while`).
REPLAY_GUARDS: dict[str, Callable[[str], bool]] = {}


class IdempotencyReplayRefused(Conflict):
    code = "idempotency_replay_refused"
    default_message = (
        "The request with this Idempotency-Key succeeded, but what it created has since been revoked or "
        "deleted, or its stored response can no longer be read; its response is not shown again."
    )


def replay_guard_register(name: str, check: Callable[[str], bool]) -> None:
    REPLAY_GUARDS[name] = check


def replay_only_while(response: Response, *, guard: str, object_id) -> Response:
    """Replay `response` only while REPLAY_GUARDS[guard](object_id) holds (e.g. the API key is not revoked)."""
    response.idempotency_guard = [guard, str(object_id)]
    return response


class IdempotencyInProgress(Conflict):
    code = "idempotency_in_progress"
    default_message = (
        "A request with this Idempotency-Key is still being processed; retry once it has finished to get its response."
    )


def idempotent(method=None, *, atomic: bool = False):
    """Marks a view method as idempotent under `Idempotency-Key` (the schema reads `method.idempotent`).

    `@idempotent(atomic=True)` runs the view and stores its response in one transaction, so a process
    killed between the two leaves neither: the claim is then taken over after IN_FLIGHT_TIMEOUT and the
    retry runs against a database the first attempt never changed. Only for views whose work is in this
    database alone: a view that calls a provider or another server must not hold its transaction (and
    its row locks) open across that call; those rely on the domain's own claim and the provider's
    idempotency key instead (docs/decisions.md#retries-and-idempotency-key).
    """
    if method is None:
        return functools.partial(idempotent, atomic=atomic)

    def run(view, request: Request, args, kwargs, claim: IdempotencyKey, key: str):
        try:
            response = method(view, request, *args, **kwargs)
        except Exception as exc:
            response = view.handle_exception(exc)
        stored = isinstance(response, Response) and is_stored_status(response.status_code)
        if stored:
            _store(claim, response, key=key)
        elif atomic:
            transaction.set_rollback(True)  # a 422, 429 or 5xx keeps nothing the view half did
        return response, stored

    @functools.wraps(method)
    def wrapper(view, request: Request, *args, **kwargs):
        raw = request.headers.get(HEADER)
        if raw is None or not request.user.is_authenticated:
            return method(view, request, *args, **kwargs)
        key = _valid_key(raw)
        fingerprint = _fingerprint(request)  # parses the body first: a malformed one is a 422, nothing claimed
        claim = _claim(user=request.user, key=key, fingerprint=fingerprint, label=f"{request.method} {request.path}")
        if isinstance(claim, Response):
            return claim
        try:
            if atomic:
                with transaction.atomic():
                    response, stored = run(view, request, args, kwargs, claim, key)
            else:
                response, stored = run(view, request, args, kwargs, claim, key)
        except BaseException:
            _release(claim)
            raise
        if not stored:
            _release(claim)
        return response

    wrapper.idempotent = True
    return wrapper


def is_idempotent(handler) -> bool:
    return bool(getattr(handler, "idempotent", False))


def is_stored_status(status_code: int) -> bool:
    """Final answers are stored and replayed; 422, 429 and 5xx release the key for a retry."""
    return 200 <= status_code < 500 and status_code not in _NOT_STORED


def idempotency_keys_prune(*, now=None) -> int:
    """Deletes expired keys, and responses an older release stored in the clear; returns how many."""
    expired = Q(expires_at__lte=now or timezone.now())
    plaintext = Q(response_status__isnull=False) & ~Q(response_body__startswith=SEALED_PREFIX)
    deleted, _ = IdempotencyKey.objects.filter(expired | plaintext).delete()
    return deleted


# --- The steps --------------------------------------------------------------------------------------


def _valid_key(raw: str) -> str:
    if not raw:
        problem = error("string_too_short", _LOC, "String should have at least 1 character", raw, {"min_length": 1})
    elif len(raw) > MAX_LENGTH:
        message = f"String should have at most {MAX_LENGTH} characters"
        problem = error("string_too_long", _LOC, message, raw, {"max_length": MAX_LENGTH})
    elif not _PATTERN.match(raw):
        message = f"String should match pattern '{PATTERN}'"
        problem = error("string_pattern_mismatch", _LOC, message, raw, {"pattern": PATTERN})
    else:
        return raw
    raise RequestValidationError([problem])


def _fingerprint(request: Request) -> str:
    query = sorted((k, sorted(v)) for k, v in request.query_params.lists())
    data = request.data
    body = {k: data.getlist(k) for k in data} if hasattr(data, "getlist") else data
    canonical = json.dumps(
        [request.method, request.path, query, body], cls=JSONEncoder, sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _claim(*, user, key: str, fingerprint: str, label: str) -> IdempotencyKey | Response:
    """The claimed row, or the stored response to replay; raises 422 (reused) or 409 (in flight)."""
    for _ in range(3):
        now = timezone.now()
        try:
            with transaction.atomic():
                return IdempotencyKey.objects.create(
                    user=user,
                    key=key,
                    fingerprint=fingerprint,
                    request=label[:500],
                    locked_at=now,
                    expires_at=now + TTL,
                )
        except IntegrityError:
            pass
        existing = IdempotencyKey.objects.filter(user=user, key=key).first()
        if existing is None:
            continue  # released or pruned since: claim it again
        if existing.expires_at <= now:
            IdempotencyKey.objects.filter(pk=existing.pk, expires_at__lte=now).delete()
            continue
        if existing.fingerprint != fingerprint:
            raise RequestValidationError(
                [
                    error(
                        "idempotency_key_reused",
                        _LOC,
                        "This Idempotency-Key was used for a different request (method, path or body); "
                        "use a new key for a new request",
                        key,
                    )
                ]
            )
        if existing.response_status is not None:
            return _replay(existing, key=key)
        if existing.locked_at <= now - IN_FLIGHT_TIMEOUT:
            # Its request died without releasing it: take it over, if no other copy did first.
            taken = IdempotencyKey.objects.filter(
                pk=existing.pk, locked_at=existing.locked_at, response_status__isnull=True
            ).update(locked_at=now)
            if taken:
                existing.locked_at = now
                return existing
        raise IdempotencyInProgress()
    raise IdempotencyInProgress()


def _store(claim: IdempotencyKey, response: Response, *, key: str) -> None:
    sealed = {"body": response.data, "guard": getattr(response, "idempotency_guard", None)}
    plaintext = json.dumps(sealed, cls=JSONEncoder, ensure_ascii=False).encode()
    headers = {name: response[name] for name in STORED_HEADERS if response.has_header(name)}
    IdempotencyKey.objects.filter(pk=claim.pk, locked_at=claim.locked_at).update(
        response_status=response.status_code, response_body=_seal(plaintext, claim, key), response_headers=headers
    )


def _release(claim: IdempotencyKey) -> None:
    IdempotencyKey.objects.filter(pk=claim.pk, locked_at=claim.locked_at, response_status__isnull=True).delete()


def _replay(stored: IdempotencyKey, *, key: str) -> Response:
    plaintext = _open(stored, key)
    if plaintext is None:  # SECRET_KEY changed past its fallbacks, or a row not sealed for this key
        raise IdempotencyReplayRefused()
    sealed = json.loads(plaintext)
    guard = sealed.get("guard")
    if guard:
        check = REPLAY_GUARDS.get(guard[0])
        if check is None or not check(guard[1]):
            raise IdempotencyReplayRefused()
    headers = {**stored.response_headers, REPLAYED_HEADER: "true"}
    return Response(sealed.get("body"), status=stored.response_status, headers=headers)


# --- Sealing ----------------------------------------------------------------------------------------


def _cipher(secret: str, stored: IdempotencyKey, key: str) -> AESGCM:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"core.http.idempotency", info=_bound(stored, key))
    return AESGCM(hkdf.derive(secret.encode()))


def _bound(stored: IdempotencyKey, key: str) -> bytes:
    """What a sealed response belongs to: the user, the client's key and the request."""
    return f"{stored.user_id}\0{key}\0{stored.fingerprint}".encode()


def _seal(plaintext: bytes, stored: IdempotencyKey, key: str) -> str:
    nonce = os.urandom(12)
    ciphertext = _cipher(settings.SECRET_KEY, stored, key).encrypt(nonce, plaintext, _bound(stored, key))
    return SEALED_PREFIX + base64.b64encode(nonce + ciphertext).decode()


def _open(stored: IdempotencyKey, key: str) -> bytes | None:
    if not stored.response_body.startswith(SEALED_PREFIX):
        return None
    try:
        blob = base64.b64decode(stored.response_body[len(SEALED_PREFIX) :])
    except ValueError:
        return None
    for secret in [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]:
        try:
            return _cipher(secret, stored, key).decrypt(blob[:12], blob[12:], _bound(stored, key))
        except (InvalidTag, ValueError):
            continue
    return None
