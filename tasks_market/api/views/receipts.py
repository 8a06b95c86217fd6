"""The poster's receipt for a task's payment (docs/payouts.md#the-sellers-api): what they paid, the fee
they were shown at selection, what came back, and the provider's reference. The poster's only: anyone
else gets 404, as for the task's other private reads (tasks_market.selectors)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from payments.models import Payment
from payments.providers import PROVIDERS
from tasks_market.api.serializers.common import FeePartField
from tasks_market.models.market import CURRENCIES
from tasks_market.selectors import receipt_payment


class ReceiptSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField(source="source_id")
    task_title = serializers.CharField()
    payment_id = serializers.UUIDField(source="id")
    provider = serializers.ChoiceField(choices=PROVIDERS)
    provider_payment_id = serializers.CharField(help_text="The provider's reference of the payment (`pi_...`).")
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="What you paid.")
    fee = FeePartField(
        "fee",
        terms=lambda payment: payment.pinned_terms,
        help_text="The platform's fee of `amount`, as shown at selection.",
    )
    net = FeePartField(
        "net", terms=lambda payment: payment.pinned_terms, help_text="What the seller receives: `amount` - `fee`."
    )
    refunded_amount = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="Given back to you so far (0.00 when nothing)."
    )
    currency = serializers.ChoiceField(choices=CURRENCIES)
    paid_at = serializers.DateTimeField(source="succeeded_at", help_text="When you paid.")

    class Meta:
        model = Payment
        fields = [
            "task_id",
            "task_title",
            "payment_id",
            "provider",
            "provider_payment_id",
            "amount",
            "fee",
            "net",
            "refunded_amount",
            "currency",
            "status",
            "paid_at",
        ]


class TaskReceiptView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="task_receipt",
        summary="The receipt of your payment for a task (the poster)",
        description=(
            "What you paid (`amount`), the platform's `fee` as shown when you selected the bid, the seller's "
            "`net`, what was given back (`refunded_amount`), the payment's `status` and the provider's "
            "reference (`provider_payment_id`). 404 `not_found` before the payment succeeded, and to anyone "
            "but the poster."
        ),
        tags=["tasks"],
        responses={200: ReceiptSerializer, 404: error_response("No paid payment of a task of yours (`not_found`).")},
    )
    def get(self, request, task_id):
        payment = receipt_payment(request.user, task_id)
        if payment is None:
            raise NotFound()
        return Response(ReceiptSerializer(payment).data)
