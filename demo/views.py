"""The local demo's pages and endpoints (docs/guide.md#the-local-demo); routed in the local profile only."""

from __future__ import annotations

import json

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.exceptions import AuthenticationFailed
from standardwebhooks import WebhookVerificationError

from accounts.authentication import BearerAuthentication
from accounts.models import User
from core.ops.enqueue import enqueue_now
from demo.models import InboxMessage
from demo.services import SIGNATURE_HEADERS, demo_agent_verify, inbox_messages, inbox_receive, inbox_url

_KEPT_HEADERS = ("content-type", "user-agent", *SIGNATURE_HEADERS)


def _error(status: int, detail: str, code: str) -> JsonResponse:
    return JsonResponse({"detail": detail, "code": code}, status=status)


@csrf_exempt
@require_POST
def agent_tasks(request: HttpRequest) -> JsonResponse:
    """The demo agent's endpoint: a signed `task.dispatched` (a task it won) or `task.matched` (a new task its
    saved search selects) is verified, acknowledged at once and handled by a Celery job: the work done and
    submitted, or a bid placed (an agent answers quickly and acts through the API later)."""
    headers = {name: request.headers.get(name, "") for name in SIGNATURE_HEADERS}
    try:
        message = demo_agent_verify(body=request.body, headers=headers)
    except WebhookVerificationError:
        return _error(401, "The signature does not verify with the demo agent's secret.", "invalid_signature")
    kind = message.get("type")
    if kind not in ("task.dispatched", "task.matched"):
        return JsonResponse({"accepted": False, "reason": f"not a message the demo agent takes: {kind}"}, status=202)
    task_id = str(((message.get("data") or {}).get("task") or {}).get("id") or "")
    if not task_id:
        return _error(400, f"A {kind} message carries data.task.id.", "invalid_message")
    queued = (
        enqueue_now("demo.tasks.agent_deliver", task_id)
        if kind == "task.dispatched"
        else enqueue_now("demo.tasks.agent_bid", task_id)
    )
    if not queued:
        return _error(503, "The demo agent could not queue the work; the platform will retry.", "agent_busy")
    return JsonResponse({"accepted": True, "task_id": task_id}, status=202)


# Who may read the inbox, and what: docs/decisions.md#the-local-webhook-inbox.


@csrf_exempt
@require_http_methods(["GET", "POST"])
def inbox_endpoint(request: HttpRequest, token: str) -> JsonResponse:
    """POST (anyone, as a receiver is): record a delivery, 401 when its signature does not verify; GET (with
    the API's Bearer token or API key): what this inbox received that the caller's own secret signed."""
    if request.method == "GET":
        return _inbox_list(request, token)
    headers = {name: request.headers[name] for name in _KEPT_HEADERS if name in request.headers}
    message = inbox_receive(token=token, body=request.body, headers=headers)
    if message.signature_verified is False:
        return _error(401, "The signature does not verify with the subscription's secret.", "invalid_signature")
    return JsonResponse({"received": True, "signature_verified": message.signature_verified})


@never_cache
def _inbox_list(request: HttpRequest, token: str) -> JsonResponse:
    try:
        user = _bearer_user(request)
    except AuthenticationFailed as exc:
        return _unauthenticated(str(exc.detail))
    if user is None:
        return _unauthenticated("Send the API's `Authorization: Bearer <access token or API key>`.")
    messages = inbox_messages(owner=user, token=token, limit=50)
    return JsonResponse({"items": [_message_json(m) for m in messages], "total": len(messages)})


@require_GET
@never_cache
def inbox_page(request: HttpRequest) -> HttpResponse:
    """The caller's deliveries in every inbox; for a browser, the admin's login session (the demo user's),
    for a script, the API's Bearer token or API key."""
    try:
        user = _bearer_user(request)
    except AuthenticationFailed as exc:
        return _unauthenticated(str(exc.detail))
    if user is None and request.user.is_authenticated:
        user = request.user
    if user is None:
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))
    rows = [{"message": m, "pretty": _pretty(m.body)} for m in inbox_messages(owner=user)]
    context = {"rows": rows, "caller": user, "example_url": inbox_url("any-name")}
    return render(request, "demo/inbox.html", context)


def _bearer_user(request: HttpRequest) -> User | None:
    """The user of the request's `Authorization: Bearer`, read as the API reads it; None without one.
    Raises AuthenticationFailed for a token or key that is not (or no longer) valid."""
    found = BearerAuthentication().authenticate(request)
    return found[0] if found else None


def _unauthenticated(detail: str) -> JsonResponse:
    response = _error(401, detail, "not_authenticated")
    response["WWW-Authenticate"] = "Bearer"
    return response


def _message_json(message: InboxMessage) -> dict:
    return {
        "id": str(message.id),
        "received_at": message.received_at.isoformat(),
        "type": message.event_type,
        "signature_verified": message.signature_verified,
        "headers": message.headers,
        "body": message.body,
    }


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2)
    except ValueError:
        return body
