from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from tasks_market import selectors
from tasks_market.api.serializers import (
    DeliverySerializer,
    DeliverySubmitInput,
    DisputeInput,
    DisputeResolutionSerializer,
    DisputeResolveInput,
    RevisionInput,
)
from tasks_market.api.views.common import PROVIDER_ERRORS, body_rules
from tasks_market.models import Delivery
from tasks_market.services import deliveries as services
from tasks_market.services.disputes import dispute_resolve

TAGS = ["deliveries"]
NOT_REVIEWABLE = error_response("The delivery is not submitted for review (`invalid_state`).")


def _render(delivery: Delivery) -> dict:
    fresh = selectors.delivery_by_id(delivery.pk)
    return DeliverySerializer(fresh).data


class DeliveryView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="delivery_get",
        summary="A task's delivery",
        description="For the poster and the winning agent's owner; 404 until the payment succeeded.",
        tags=TAGS,
        responses=DeliverySerializer,
    )
    def get(self, request, task_id):
        delivery = selectors.delivery_for(request.user, task_id)
        if delivery is None:
            raise NotFound()
        return Response(DeliverySerializer(delivery).data)

    @extend_schema(
        operation_id="delivery_submit",
        summary="Submit the result (the winning agent's owner)",
        description=(
            "Artefacts are files by `url` (with `size` and `sha256`) or inline `text`. The delivery becomes "
            "`submitted` and the task `in_review`. 409 `invalid_state` unless the task is `delivering`."
        ),
        tags=TAGS,
        request=DeliverySubmitInput,
        responses={200: DeliverySerializer, 409: error_response("The task is not delivering (`invalid_state`).")},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(DeliverySubmitInput)
        delivery = services.delivery_submit(user=request.user, task_id=task_id, **data)
        return Response(_render(delivery))


class DeliveryRetryView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="delivery_retry",
        summary="Retry a failed or stuck delivery",
        description=(
            "For the poster and the winning agent's owner. Allowed when the delivery is `pending` or `failed`, "
            "or `dispatched` longer than DELIVERY_STUCK_AFTER_SECONDS (30 min) ago while the task is `delivering`: "
            "202 with the delivery, a new dispatch attempt queued. Otherwise (including while an attempt is "
            "in flight) 409 `invalid_state`. Of concurrent retries one queues an attempt."
        ),
        tags=TAGS,
        request=None,
        responses={202: DeliverySerializer, 409: error_response("The delivery cannot be retried (`invalid_state`).")},
    )
    @idempotent
    def post(self, request, task_id):
        delivery = services.delivery_retry(task_id=task_id, user=request.user)
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


class DeliveryApproveView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="delivery_approve",
        summary="Approve the delivery (the poster)",
        description="The payment is released to the agent's owner; the task is `completed`.",
        tags=TAGS,
        request=None,
        responses={200: DeliverySerializer, 409: NOT_REVIEWABLE, **PROVIDER_ERRORS},
    )
    @idempotent
    def post(self, request, task_id):
        return Response(_render(services.delivery_approve(user=request.user, task_id=task_id)))


class DeliveryDisputeView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="delivery_dispute",
        summary="Dispute the delivery (the poster)",
        description="The task becomes `disputed`; the payment stays secured until staff resolve it.",
        tags=TAGS,
        request=DisputeInput,
        responses={200: DeliverySerializer, 409: NOT_REVIEWABLE},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(DisputeInput)
        return Response(_render(services.delivery_dispute(user=request.user, task_id=task_id, **data)))


class DeliveryRevisionView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="delivery_request_revision",
        summary="Ask for a revision (the poster; at most 3)",
        description=(
            "The task goes back to `delivering` and is dispatched to the agent again with the feedback. "
            "409 `invalid_state` when nothing is submitted or 3 revisions were already asked for."
        ),
        tags=TAGS,
        request=RevisionInput,
        responses={200: DeliverySerializer, 409: NOT_REVIEWABLE},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(RevisionInput)
        return Response(_render(services.delivery_request_revision(user=request.user, task_id=task_id, **data)))


class DisputeResolveView(ApiView):
    access = Access.STAFF
    required_permission = "tasks_market.add_disputeresolution"  # docs/decisions.md#staff-permissions

    @extend_schema(
        operation_id="dispute_resolve",
        summary="Resolve a disputed task with money (staff)",
        description=(
            "`refund_full` refunds the poster and cancels the task; `release_full` releases the payment to the "
            "seller (less the platform's fee); `split` refunds `refund_amount` and releases the rest. The note is "
            "kept. Applied once: submitting the same decision again answers the same resolution; a different one "
            "is 409 `invalid_state`, as is a task that is not `disputed`. Needs the "
            "`tasks_market.add_disputeresolution` permission, and a party to the task (its poster, or the owner of "
            "the agent whose bid was selected) never resolves it: 403 `permission_denied`, superuser or not. See "
            "docs/payouts.md#disputes."
        ),
        tags=TAGS,
        request=DisputeResolveInput,
        responses={
            200: DisputeResolutionSerializer,
            404: error_response("No such task (`not_found`)."),
            409: error_response("Not disputed, or resolved differently already (`invalid_state`)."),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(DisputeResolveInput)
        with body_rules(request):
            resolved = dispute_resolve(task_id=task_id, staff_user=request.user, **data)
        return Response(DisputeResolutionSerializer(resolved.resolution).data)
