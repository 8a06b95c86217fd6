from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from core.api.filters import filtered, parameters
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent
from payments import signing
from webhooks_app import selectors
from webhooks_app.api.serializers import (
    InboundResultSerializer,
    IssuedSubscriptionSerializer,
    ProviderEventSerializer,
    SubscriptionInput,
    WebhookDeliverySerializer,
    WebhookSubscriptionSerializer,
)
from webhooks_app.filters import DeliveryFilter
from webhooks_app.inbound import MAX_BODY_BYTES, inbound_receive
from webhooks_app.models import InboundOutcome
from webhooks_app.services import (
    webhook_subscription_create,
    webhook_subscription_delete,
    webhook_subscription_rotate_secret,
)

TAGS = ["webhooks"]

_INBOUND_ERRORS = {
    InboundOutcome.TOO_LARGE: (413, "The request body is too large.", "payload_too_large"),
    InboundOutcome.INVALID_SIGNATURE: (
        400,
        "The Payments-Signature header is missing or invalid.",
        "invalid_signature",
    ),
    InboundOutcome.INVALID_EVENT: (400, "The body is not a provider event.", "invalid_event"),
    InboundOutcome.FAILED: (
        500,
        "The event could not be processed; it was kept and is processed again when it is re-sent.",
        "server_error",
    ),
}
_INBOUND_STATUS = {
    InboundOutcome.PROCESSED: "processed",
    InboundOutcome.DUPLICATE: "duplicate",
    InboundOutcome.IGNORED: "ignored",
    InboundOutcome.SKIPPED: "ignored",
    InboundOutcome.REJECTED: "rejected",
}


def _declared_length(meta) -> int | None:
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


class PaymentsWebhookView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="webhooks_payments_receive",
        summary="Receive a payment-provider event",
        description=(
            "Called by the payment provider, not by users. The raw body is verified against "
            '`Payments-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (or Stripe\'s '
            "`Stripe-Signature`, the same scheme) with every configured secret (300 s tolerance), stored, and "
            "applied at most once per event id. A handler failure answers 500 and keeps the event, so the "
            "provider's retry applies it. An authentic event that is "
            "refused (a payment success whose amount or currency does not match the payment) answers 200 "
            "`rejected` and is recorded, not applied. Bodies over 256 KiB are 413."
        ),
        tags=TAGS,
        request=ProviderEventSerializer,
        parameters=[
            OpenApiParameter(
                signing.HEADER,
                str,
                OpenApiParameter.HEADER,
                required=True,
                description="`t=<unix seconds>,v1=<hex signature>[,v1=<hex signature>...]`",
            )
        ],
        responses={
            200: InboundResultSerializer,
            400: error_response(
                "Missing or invalid signature (`invalid_signature`), or not an event (`invalid_event`)."
            ),
            413: error_response("The body is over 256 KiB."),
            500: error_response("A handler failed; the event is kept as failed and processed when re-sent."),
        },
    )
    def post(self, request):
        declared = _declared_length(request.META)
        body: bytes | None = None
        if declared is None or declared <= MAX_BODY_BYTES:
            raw = request._request.read(MAX_BODY_BYTES + 1)
            body = raw if len(raw) <= MAX_BODY_BYTES else None
        remote_ip = getattr(request._request, "client_ip", None) or request.META.get("REMOTE_ADDR")
        result = inbound_receive(body=body, headers=dict(request.headers), remote_ip=remote_ip)
        if result.outcome in _INBOUND_ERRORS:
            code, detail, error_code = _INBOUND_ERRORS[result.outcome]
            return Response({"detail": detail, "code": error_code}, status=code)
        return Response({"status": _INBOUND_STATUS[result.outcome], "event_id": result.event_id})


class SubscriptionListView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="webhook_subscriptions_list",
        summary="List your webhook subscriptions",
        description="Your subscriptions, newest first: URL, events and whether each is active (never the secret).",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(WebhookSubscriptionSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(selectors.subscription_list(owner=request.user), **params)
        return Response(render_page(WebhookSubscriptionSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="webhook_subscriptions_create",
        summary="Subscribe an endpoint to events",
        description=(
            "Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, "
            "`webhook-signature`) with the returned `secret`, shown only here. Attempts: at once, then "
            "after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (with jitter); 15 s timeout; only 2xx "
            "succeeds; 410 disables the subscription."
        ),
        tags=TAGS,
        request=SubscriptionInput,
        responses={201: IssuedSubscriptionSerializer, 409: error_response("You have too many subscriptions.")},
    )
    @idempotent
    def post(self, request):
        data = self.body(SubscriptionInput)
        subscription = webhook_subscription_create(owner=request.user, **data)
        return self.created(
            IssuedSubscriptionSerializer(subscription).data,
            "webhook-subscription-detail",
            subscription_id=subscription.id,
        )


class SubscriptionDetailView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="webhook_subscriptions_get",
        summary="A webhook subscription",
        description="One of your webhook subscriptions by id (never its secret).",
        tags=TAGS,
        responses=WebhookSubscriptionSerializer,
    )
    def get(self, request, subscription_id):
        subscription = selectors.subscription_get(owner=request.user, subscription_id=subscription_id)
        return Response(WebhookSubscriptionSerializer(subscription).data)

    @extend_schema(
        operation_id="webhook_subscriptions_delete",
        summary="Delete a webhook subscription and its delivery history",
        description="Deliveries stop at once; the subscription's delivery history is deleted with it.",
        tags=TAGS,
        responses={204: OpenApiResponse(description="Deleted.")},
    )
    def delete(self, request, subscription_id):
        webhook_subscription_delete(owner=request.user, subscription_id=subscription_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SubscriptionRotateSecretView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="webhook_subscriptions_rotate_secret",
        summary="Rotate the signing secret",
        description=(
            "Returns the new secret, shown only here. For the next 24 hours the previous secret keeps "
            "signing beside it (two `v1,` signatures), so receivers can switch without missing a message."
        ),
        tags=TAGS,
        request=None,
        responses=IssuedSubscriptionSerializer,
    )
    @idempotent
    def post(self, request, subscription_id):
        subscription = webhook_subscription_rotate_secret(owner=request.user, subscription_id=subscription_id)
        return Response(IssuedSubscriptionSerializer(subscription).data)


class SubscriptionDeliveriesView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="webhook_subscriptions_deliveries",
        summary="Deliveries of a subscription, newest first, with every attempt",
        description=(
            "Each delivery of an event to this subscription, newest first: its `webhook-id`, the body sent and every "
            "attempt."
        ),
        tags=TAGS,
        parameters=[PageQuery, parameters(DeliveryFilter)],
        responses=envelope(WebhookDeliverySerializer),
    )
    def get(self, request, subscription_id):
        subscription = selectors.subscription_get(owner=request.user, subscription_id=subscription_id)
        params = self.query(PageQuery, DeliveryFilter)
        deliveries = filtered(DeliveryFilter, selectors.delivery_list(subscription=subscription), params)
        # Kept per status (docs/decisions.md#lists): `status` is the filter's only field.
        rows, total, has_more, next_cursor = keyset_page(
            deliveries,
            limit=params["limit"],
            offset=params["offset"],
            cursor=params.get("cursor"),
            total=selectors.delivery_total(subscription=subscription, status=params.get("status")),
        )
        return Response(render_page(WebhookDeliverySerializer, rows, total, has_more, next_cursor=next_cursor))
