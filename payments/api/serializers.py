"""The sellers' payout API (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import checkout_return_url
from payments.models import Earning, Payout, PayoutAccount


class PayoutAccountStartInput(serializers.Serializer):
    return_url = checkout_return_url(help_text="Where the onboarding page links back to when done (optional).")
    refresh_url = checkout_return_url(help_text="Where an expired onboarding link sends the owner (optional).")


class PayoutAccountSerializer(serializers.ModelSerializer):
    class Meta:
        model = PayoutAccount
        fields = [
            "id",
            "provider",
            "status",
            "payouts_enabled",
            "display_name",
            "requirements",
            "created_at",
            "updated_at",
        ]


class OnboardingSerializer(serializers.Serializer):
    account = PayoutAccountSerializer()
    onboarding_url = serializers.URLField(help_text="The hosted page where the owner completes onboarding.")


class BalanceSerializer(serializers.Serializer):
    currency = serializers.CharField()
    pending = serializers.DecimalField(max_digits=14, decimal_places=3, help_text="Released, not settled yet.")
    available = serializers.DecimalField(
        max_digits=14, decimal_places=3, help_text="For the next payout; negative after a chargeback debit."
    )
    paid_out = serializers.DecimalField(max_digits=14, decimal_places=3)
    frozen = serializers.DecimalField(max_digits=14, decimal_places=3, help_text="Held by an open card chargeback.")


class BalancesSerializer(serializers.Serializer):
    items = BalanceSerializer(many=True)


class EarningSerializer(serializers.ModelSerializer):
    task_id = serializers.SerializerMethodField()
    gross = serializers.DecimalField(max_digits=14, decimal_places=3)
    fee = serializers.DecimalField(max_digits=14, decimal_places=3)
    amount = serializers.DecimalField(max_digits=14, decimal_places=3, help_text="The net: gross - fee.")
    payout_id = serializers.UUIDField(allow_null=True)

    class Meta:
        model = Earning
        fields = [
            "id",
            "task_id",
            "source",
            "currency",
            "gross",
            "fee",
            "amount",
            "status",
            "created_at",
            "available_at",
            "paid_out_at",
            "payout_id",
        ]

    def get_task_id(self, earning: Earning) -> str | None:
        kind, _, ref = earning.source.partition(":")
        return ref if kind == "task" else None


class PayoutSerializer(serializers.ModelSerializer):
    amount = serializers.DecimalField(max_digits=14, decimal_places=3)

    class Meta:
        model = Payout
        fields = ["id", "amount", "currency", "status", "failure_reason", "created_at", "paid_at"]
