"""Agent reputation and reviews (docs/decisions.md#agent-reputation, docs/decisions.md#reviews)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import BlankAsNullField
from tasks_market.models import Review
from tasks_market.models.reputation import PRIOR_MEAN, PRIOR_WEIGHT
from tasks_market.services.reputation import Reputation, reputation_summary

COMMENT_MAX = 5_000
BID_SORTS = ("reputation", "amount", "eta")


class BidListQuery(serializers.Serializer):
    context_free = True

    sort = serializers.ChoiceField(
        choices=BID_SORTS,
        required=False,
        help_text="`reputation`: the agent's rating score, best first (then completed tasks); `amount`: "
        "cheapest first; `eta`: fastest first. Without it, newest first. `reputation` pages by `offset` only.",
    )


class ReviewInput(serializers.Serializer):
    rating = serializers.IntegerField(min_value=1, max_value=5)
    comment = serializers.CharField(max_length=COMMENT_MAX, required=False, allow_blank=True, default="")


class ReviewEditInput(serializers.Serializer):
    rating = serializers.IntegerField(min_value=1, max_value=5, required=False)
    comment = serializers.CharField(max_length=COMMENT_MAX, required=False, allow_blank=True)


class ReplyInput(serializers.Serializer):
    reply = serializers.CharField(max_length=COMMENT_MAX)


class ReviewSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    rating = serializers.IntegerField(min_value=1, max_value=5)
    comment = serializers.SerializerMethodField(help_text="Null when empty or hidden by staff.")
    reply = BlankAsNullField(help_text="The agent owner's one answer.")

    class Meta:
        model = Review
        fields = [
            "id",
            "task_id",
            "agent_id",
            "rating",
            "comment",
            "comment_hidden",
            "editable_until",
            "reply",
            "replied_at",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_comment(self, review: Review) -> str | None:
        return None if review.comment_hidden or not review.comment else review.comment


class ReputationSummarySerializer(serializers.Serializer):
    score = serializers.FloatField(help_text="The Bayesian rating score, 1..5 (the prior mean when unrated).")
    rating_count = serializers.IntegerField()
    completed_tasks = serializers.IntegerField()
    approved_without_revision = serializers.IntegerField()
    on_time = serializers.IntegerField()
    disputes = serializers.IntegerField(help_text="Disputes resolved by staff, whatever the outcome.")


@extend_schema_field(ReputationSummarySerializer)
class AgentReputationField(serializers.Field):
    """A bid's `agent_reputation`: read from the agent's row that the bids query joined (no query per bid)."""

    def __init__(self, **kwargs):
        super().__init__(source="agent", read_only=True, **kwargs)

    def to_representation(self, agent):
        # Written out rather than a ReputationSummarySerializer per bid: building a serializer copies its
        # fields, which cost a page of 20 bids more than its query (bench/bids.py). The schema is that
        # serializer's; tests/tasks_market/test_bids_reputation.py pins the two.
        summary = reputation_summary(getattr(agent, "reputation", None))
        return {name: float(value) if name == "score" else int(value) for name, value in summary.items()}


class CountOf(serializers.Serializer):
    count = serializers.IntegerField()
    of = serializers.IntegerField(help_text="Completed tasks.")
    rate = serializers.FloatField(allow_null=True, help_text="count / of; null with no completed task.")


class DisputesSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    refund_full = serializers.IntegerField()
    release_full = serializers.IntegerField()
    split = serializers.IntegerField()


class RatingSerializer(serializers.Serializer):
    score = serializers.FloatField()
    count = serializers.IntegerField()
    prior_mean = serializers.FloatField(help_text="m")
    prior_weight = serializers.FloatField(help_text="C")
    weight_sum = serializers.FloatField(help_text="Σ w, w = log10(10 + the task's amount)")
    weighted_sum = serializers.FloatField(help_text="Σ w·rating")
    formula = serializers.CharField()


class NotCountedSerializer(serializers.Serializer):
    self_dealt = serializers.IntegerField()
    refunded_in_full = serializers.IntegerField()


class BenchmarkSummarySerializer(serializers.Serializer):
    score = serializers.FloatField(allow_null=True, help_text="The last completed benchmark, 0..100.")
    benchmarked_at = serializers.DateTimeField(allow_null=True)


class AgentReputationSerializer(serializers.Serializer):
    agent_id = serializers.UUIDField()
    agent_name = serializers.CharField()
    completed_tasks = serializers.IntegerField()
    approved_without_revision = CountOf()
    on_time = CountOf()
    disputes = DisputesSerializer()
    rating = RatingSerializer()
    median_delivery_seconds = serializers.IntegerField(
        allow_null=True, help_text="From the payment to the last submission, over the completed tasks; null with none."
    )
    not_counted = NotCountedSerializer()
    benchmark = BenchmarkSummarySerializer()


FORMULA = "score = (C·m + Σ w·rating) / (C + Σ w)"


def _count_of(count: int, of: int) -> dict:
    return {"count": count, "of": of, "rate": round(count / of, 4) if of else None}


def reputation_body(reputation: Reputation) -> dict:
    record, agent = reputation.record, reputation.agent
    return AgentReputationSerializer(
        {
            "agent_id": agent.id,
            "agent_name": agent.name,
            "completed_tasks": record.completed_tasks,
            "approved_without_revision": _count_of(record.approved_without_revision, record.completed_tasks),
            "on_time": _count_of(record.on_time, record.completed_tasks),
            "disputes": {
                "total": record.disputes,
                "refund_full": record.disputes_refund_full,
                "release_full": record.disputes_release_full,
                "split": record.disputes_split,
            },
            "rating": {
                "score": record.score,
                "count": record.rating_count,
                "prior_mean": PRIOR_MEAN,
                "prior_weight": PRIOR_WEIGHT,
                "weight_sum": record.rating_weight_sum,
                "weighted_sum": record.rating_weighted_sum,
                "formula": FORMULA,
            },
            "median_delivery_seconds": reputation.median_delivery_seconds,
            "not_counted": {
                "self_dealt": reputation.not_counted.get("self_dealt", 0),
                "refunded_in_full": reputation.not_counted.get("refunded_in_full", 0),
            },
            "benchmark": {"score": agent.benchmark_score, "benchmarked_at": agent.benchmarked_at},
        }
    ).data
