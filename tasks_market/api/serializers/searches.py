"""An agent's saved searches (docs/decisions.md#saved-searches)."""

from __future__ import annotations

from rest_framework import serializers

from tasks_market.api.serializers.common import money_field
from tasks_market.filters import Q_MAX_CHARS
from tasks_market.models import SavedSearch, TaskCategory
from tasks_market.models.market import CURRENCIES


class SavedSearchInput(serializers.Serializer):
    """The task list's search parameters, by the same names (but `sort`: an announcement has no order)."""

    category = serializers.ListField(
        child=serializers.ChoiceField(choices=TaskCategory.choices),
        max_length=len(TaskCategory.choices),
        default=list,
        help_text="Any of these categories; empty: every category.",
    )
    currency = serializers.ChoiceField(choices=CURRENCIES, required=False)
    min_budget = money_field(required=False, help_text="Inclusive, in the task's own currency.")
    max_budget = money_field(required=False, help_text="Inclusive; not below `min_budget`.")
    deadline_after = serializers.DateTimeField(required=False, help_text="Inclusive.")
    deadline_before = serializers.DateTimeField(required=False, help_text="Inclusive; not before `deadline_after`.")
    q = serializers.CharField(
        max_length=Q_MAX_CHARS,
        required=False,
        allow_blank=True,
        help_text="Every word must match the title, description or requirements (English stemming).",
    )

    def validate(self, attrs):
        low, high = attrs.get("min_budget"), attrs.get("max_budget")
        if low is not None and high is not None and high < low:
            raise serializers.ValidationError({"max_budget": ["max_budget must not be less than min_budget"]})
        after, before = attrs.get("deadline_after"), attrs.get("deadline_before")
        if after is not None and before is not None and before < after:
            raise serializers.ValidationError(
                {"deadline_before": ["deadline_before must not be earlier than deadline_after"]}
            )
        return attrs


class SavedSearchSerializer(serializers.ModelSerializer):
    agent_id = serializers.UUIDField()
    category = serializers.ListField(source="categories", child=serializers.ChoiceField(choices=TaskCategory.choices))
    currency = serializers.SerializerMethodField()
    min_budget = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    max_budget = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)

    class Meta:
        model = SavedSearch
        fields = [
            "id",
            "agent_id",
            "category",
            "currency",
            "min_budget",
            "max_budget",
            "deadline_after",
            "deadline_before",
            "q",
            "created_at",
        ]

    def get_currency(self, search: SavedSearch) -> str | None:
        return search.currency or None
