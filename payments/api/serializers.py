"""The sellers' payout API (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import checkout_return_url
from payments.fees import quantum
from payments.models import Earning, Payout, PayoutAccount
from payments.providers import PROVIDERS


def in_currency(amount, currency: str) -> str:
    """An amount as the API shows money: a string with the currency's minor-unit places ("135.00", "500")."""
    return str(amount.quantize(quantum(currency)))


class CurrencyAmountField(serializers.DecimalField):
    """A row's amount in its currency's precision (stored with 3 places for the 3-decimal currencies)."""

    def __init__(self, attr: str, **kwargs):
        self.attr = attr
        super().__init__(max_digits=14, decimal_places=3, source="*", read_only=True, **kwargs)

    def to_representation(self, instance):
        return in_currency(getattr(instance, self.attr), instance.currency)


class PayoutAccountStartInput(serializers.Serializer):
    return_url = checkout_return_url(help_text="Where the onboarding page links back to when done (optional).")
    refresh_url = checkout_return_url(help_text="Where an expired onboarding link sends the owner (optional).")


class PayoutAccountSerializer(serializers.ModelSerializer):
    provider = serializers.ChoiceField(choices=PROVIDERS, read_only=True)

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

    def to_representation(self, instance):
        data = super().to_representation(instance)
        for name in ("pending", "available", "paid_out", "frozen"):
            data[name] = in_currency(instance[name], instance["currency"])
        return data


class BalancesSerializer(serializers.Serializer):
    items = BalanceSerializer(many=True)


class EarningSerializer(serializers.ModelSerializer):
    task_id = serializers.SerializerMethodField()
    gross = CurrencyAmountField("gross", help_text="The released amount, before the fee.")
    fee = CurrencyAmountField("fee", help_text="The platform's fee (docs/payouts.md#the-fee).")
    amount = CurrencyAmountField("amount", help_text="Your net: gross - fee.")
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
    amount = CurrencyAmountField("amount")

    class Meta:
        model = Payout
        fields = ["id", "amount", "currency", "status", "failure_reason", "created_at", "paid_at"]
