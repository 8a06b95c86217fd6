"""Bids, the judge's evaluation, and the payment of a selected bid."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import checkout_return_url
from payments.models import Payment
from payments.providers import PROVIDERS
from tasks_market.api.serializers.common import (
    ArtefactInput,
    BlankAsNullField,
    FeePartField,
    money_field,
    whole_amounts_in,
)
from tasks_market.api.serializers.reputation import AgentReputationField
from tasks_market.api.serializers.tasks import TaskSerializer
from tasks_market.models import Bid, BidJudgement
from tasks_market.models.market import CURRENCIES, JudgementStatus, check_amount_places, check_currency
from tasks_market.services import judging

ETA_HOURS_MAX = 8760  # a year


class BidInput(serializers.Serializer):
    openapi_extra = whole_amounts_in("amount", "currency")

    agent_id = serializers.UUIDField(help_text="One of your agents.")
    amount = money_field()
    currency = serializers.ChoiceField(choices=CURRENCIES, help_text="The task's budget currency.")
    proposal = serializers.CharField(max_length=10_000)
    eta_hours = serializers.IntegerField(min_value=1, max_value=ETA_HOURS_MAX)
    # ListField rather than many=True: list-level errors of a ListSerializer are not translated (a platform gap).
    sample_artefacts = serializers.ListField(child=ArtefactInput(), max_length=10, required=False)

    def validate_currency(self, value):
        problem = check_currency(value)  # docs/decisions.md#settlement-currencies
        if problem:
            raise serializers.ValidationError(problem, code="currency_not_settled")
        return value

    def validate(self, attrs):
        if "amount" in attrs and "currency" in attrs:
            problem = check_amount_places(attrs["amount"], attrs["currency"])
            if problem:
                raise serializers.ValidationError({"amount": [problem]}, code="decimal_places")
        return attrs


class BidSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    agent_name = serializers.CharField(source="agent.name")
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    fee = FeePartField("fee", help_text="The platform's fee of `amount` (docs/payouts.md#the-fee).")
    net = FeePartField("net", help_text="What the seller receives: `amount` - `fee`.")
    currency = serializers.ChoiceField(choices=CURRENCIES)
    judge_status = serializers.ChoiceField(
        choices=JudgementStatus.choices, source="judgement.status", allow_null=True, default=None
    )
    judge_score = serializers.FloatField(source="judgement.score", allow_null=True, default=None)
    # The bounds BidInput checks (the column alone would say 0 to 2**63 - 1).
    eta_hours = serializers.IntegerField(min_value=1, max_value=ETA_HOURS_MAX)
    # The agent's record (docs/decisions.md#agent-reputation), from its row joined in the bids query.
    agent_reputation = AgentReputationField(
        help_text="The agent's record: GET /api/v1/agents/{id}/reputation explains it."
    )

    class Meta:
        model = Bid
        fields = [
            "id",
            "task_id",
            "agent_id",
            "agent_name",
            "amount",
            "fee",
            "net",
            "currency",
            "proposal",
            "eta_hours",
            "status",
            "judge_status",
            "judge_score",
            "agent_reputation",
            "created_at",
            "updated_at",
        ]


class JudgeCriterionSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=judging.CRITERIA)
    weight = serializers.FloatField()
    score = serializers.FloatField(help_text="0..1")
    detail = serializers.CharField()


class BidJudgementSerializer(serializers.ModelSerializer):
    bid_id = serializers.UUIDField()
    score = serializers.FloatField(allow_null=True, help_text="0..100 (100 * the weighted sum of the criteria).")
    criteria = JudgeCriterionSerializer(many=True)
    method = BlankAsNullField()

    class Meta:
        model = BidJudgement
        fields = ["bid_id", "status", "score", "criteria", "method", "evaluated_at"]


class PaymentSerializer(serializers.ModelSerializer):
    provider = serializers.ChoiceField(choices=PROVIDERS)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    fee = FeePartField(
        "fee",
        terms=lambda payment: payment.pinned_terms,
        help_text="The platform's fee of `amount`, as pinned at selection (docs/payouts.md#the-fee).",
    )
    net = FeePartField(
        "net", terms=lambda payment: payment.pinned_terms, help_text="What the seller receives: `amount` - `fee`."
    )
    client_secret = serializers.CharField(help_text="Confirms the payment with the provider's client library.")
    currency = serializers.ChoiceField(choices=CURRENCIES)
    checkout_url = BlankAsNullField(help_text="A hosted payment page, when the provider has one.")

    class Meta:
        model = Payment
        fields = [
            "id",
            "provider",
            "provider_payment_id",
            "amount",
            "fee",
            "net",
            "currency",
            "status",
            "client_secret",
            "checkout_url",
        ]


class BidSelectInput(serializers.Serializer):
    success_url = checkout_return_url(help_text="Where the checkout page links after paying (optional).")
    cancel_url = checkout_return_url(help_text="Where the checkout page links after declining (optional).")


class SelectionSerializer(serializers.Serializer):
    task = TaskSerializer()
    bid = BidSerializer()
    payment = PaymentSerializer()
