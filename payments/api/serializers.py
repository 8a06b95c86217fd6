"""The sellers' payout API (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import checkout_return_url
from core.api.pagination import PageQuery
from payments.api.statement import STATES
from payments.fees import quantum
from payments.models import HOLD_REASONS, Earning, Payout, PayoutAccount
from payments.providers import PROVIDERS

# ISO 3166-1 alpha-2: the officially assigned codes.
_ISO_3166 = """
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY
BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK
FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR
IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK
ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM
PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF
TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
"""
COUNTRIES = frozenset(_ISO_3166.split())
_CURRENCY = re.compile(r"^[A-Za-z]{3}$")


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
    country = serializers.CharField(
        required=False,
        min_length=2,
        max_length=2,
        help_text="Where the account and its bank are: an ISO 3166-1 alpha-2 code such as `DE` (optional, "
        "`US` when left out; kept from the first start). The provider may not support every country (502).",
    )

    def validate_country(self, value: str) -> str:
        code = value.upper()
        if code not in COUNTRIES:
            raise serializers.ValidationError("not an ISO 3166-1 alpha-2 country code", code="country")
        return code


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
    net = CurrencyAmountField("amount", help_text="Your net: gross - fee.")
    amount = CurrencyAmountField(
        "amount", help_text="Deprecated: the same as `net` (kept for clients that read it; use `net`)."
    )
    available_at = serializers.DateTimeField(
        source="available_after", help_text="When the hold ends and the money can be paid out."
    )
    hold_reason = serializers.ChoiceField(
        choices=sorted(HOLD_REASONS),
        allow_null=True,
        read_only=True,
        help_text="Why the money is not paid out yet; null once nothing holds it (paid out, or reversed). "
        + " ".join(f"`{code}`: {text}" for code, text in sorted(HOLD_REASONS.items())),
    )
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
            "net",
            "amount",
            "status",
            "created_at",
            "available_at",
            "hold_reason",
            "paid_out_at",
            "payout_id",
        ]

    def get_task_id(self, earning: Earning) -> str | None:
        kind, _, ref = earning.source.partition(":")
        return ref if kind == "task" else None

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["hold_reason"] = instance.hold_reason or None
        return data


class PayoutSerializer(serializers.ModelSerializer):
    amount = CurrencyAmountField("amount")
    transfer_id = serializers.SerializerMethodField(
        help_text="The provider's transfer that moved the money to your account (`tr_...`); null until made."
    )

    class Meta:
        model = Payout
        fields = ["id", "amount", "currency", "status", "failure_reason", "transfer_id", "created_at", "paid_at"]

    def get_transfer_id(self, payout: Payout) -> str | None:
        return payout.transfer_id or None


class PayoutEarningSerializer(serializers.ModelSerializer):
    net = CurrencyAmountField("amount", help_text="What the earning added to the payout: its net.")

    class Meta:
        model = Earning
        fields = ["id", "source", "net"]


class PayoutDebtSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The ledger line.")
    created_at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="The ledger entry's kind, e.g. `chargeback_debited`, `reversed`.")
    reason = serializers.CharField(help_text="The movement in words.")
    source = serializers.CharField(help_text="What it is about, e.g. `task:<uuid>`.")
    amount = CurrencyAmountField(
        "amount", help_text="What it took from the payout (negative: what it gave back, e.g. a chargeback won)."
    )
    currency = serializers.CharField()


class PayoutDetailSerializer(PayoutSerializer):
    earnings = serializers.SerializerMethodField(help_text="The earnings the payout paid.")
    debts = serializers.SerializerMethodField(
        help_text="The debts it netted since the payout before: amount = the earnings' net - the debts."
    )

    class Meta(PayoutSerializer.Meta):
        fields = [*PayoutSerializer.Meta.fields, "earnings", "debts"]

    @extend_schema_field(PayoutEarningSerializer(many=True))
    def get_earnings(self, payout: Payout) -> list:
        return PayoutEarningSerializer(self.context["earnings"], many=True).data

    @extend_schema_field(PayoutDebtSerializer(many=True))
    def get_debts(self, payout: Payout) -> list:
        return PayoutDebtSerializer(self.context["debts"], many=True).data


class BalanceMovementSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The ledger line (one entry moves money between your states).")
    created_at = serializers.DateTimeField()
    kind = serializers.CharField(
        help_text="The ledger entry's kind: `released`, `available`, `payout`, `payout_failed`, "
        "`chargeback_frozen`, `chargeback_debited`, `chargeback_won`, `chargeback_lost`, `reversed`, ..."
    )
    reason = serializers.CharField(help_text='The movement in words, e.g. "Released for task <uuid>", "Paid out".')
    source = serializers.CharField(help_text="What it is about: `task:<uuid>` or `payout:<uuid>`.")
    state = serializers.ChoiceField(choices=STATES, read_only=True, help_text="The balance it moved.")
    amount = CurrencyAmountField("amount", help_text="Signed: positive into `state`, negative out of it.")
    currency = serializers.CharField()
    balance_after = CurrencyAmountField("balance_after", help_text="The `state` balance in `currency` after it.")


class StatementQuery(PageQuery):
    context_free = True

    currency = serializers.CharField(required=False, help_text="Only this currency's movements (ISO 4217, e.g. `usd`).")

    def validate_currency(self, value: str) -> str:
        if not _CURRENCY.match(value):
            raise serializers.ValidationError("not an ISO 4217 currency code", code="currency")
        return value.lower()
