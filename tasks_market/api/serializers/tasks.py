"""Tasks: input, and the shape the schema documents (rendered by tasks_market.representation)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import serializers

from tasks_market.api.serializers.common import money_field, whole_amounts_in
from tasks_market.models import Task, TaskCategory
from tasks_market.models.market import CURRENCIES, check_amount_places, check_currency
from tasks_market.representation import task_item
from tasks_market.selectors.task_list import TASK_COLUMNS


class _TaskFields(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=10_000)
    budget_amount = money_field()
    budget_currency = serializers.ChoiceField(choices=CURRENCIES, help_text="ISO 4217, lower case.")
    deadline = serializers.DateTimeField(help_text="Must be in the future.")
    category = serializers.ChoiceField(choices=TaskCategory.choices, default=TaskCategory.OTHER)
    requirements = serializers.ListField(child=serializers.CharField(max_length=500), max_length=50, default=list)

    def validate_deadline(self, value):
        if value <= timezone.now():
            raise serializers.ValidationError("The deadline must be in the future.", code="deadline_past")
        return value

    def validate_budget_currency(self, value):
        problem = check_currency(value)  # docs/decisions.md#settlement-currencies
        if problem:
            raise serializers.ValidationError(problem, code="currency_not_settled")
        return value

    def validate(self, attrs):
        if "budget_amount" in attrs and "budget_currency" in attrs:
            problem = check_amount_places(attrs["budget_amount"], attrs["budget_currency"])
            if problem:
                raise serializers.ValidationError({"budget_amount": [problem]}, code="decimal_places")
        return attrs


# For the schema: a deadline in the future as the example (generated clients and fuzzers start from it), and
# whole amounts in jpy.
_TASK_SCHEMA = {
    "properties": {"deadline": {"examples": ["2099-12-31T23:59:59Z"]}},
    **whole_amounts_in("budget_amount", "budget_currency"),
}


class TaskInput(_TaskFields):
    openapi_extra = _TASK_SCHEMA


class TaskRemixInput(_TaskFields):
    """Everything is copied from the task unless given here."""

    openapi_extra = _TASK_SCHEMA

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False
            field.default = serializers.empty


class TaskSerializer(serializers.ModelSerializer):
    """The task's shape, for the schema; rendering goes through `task_item`."""

    budget_amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    budget_currency = serializers.ChoiceField(choices=CURRENCIES)
    requirements = serializers.ListField(child=serializers.CharField())
    remixed_from = serializers.UUIDField(source="remixed_from_id", allow_null=True)
    selected_bid_id = serializers.UUIDField(allow_null=True)
    is_mine = serializers.BooleanField(help_text="Whether you posted the task.")

    class Meta:
        model = Task
        fields = [
            "id",
            "title",
            "description",
            "budget_amount",
            "budget_currency",
            "deadline",
            "category",
            "requirements",
            "status",
            "remixed_from",
            "selected_bid_id",
            "is_mine",
            "created_at",
            "updated_at",
            "cancelled_at",
            "completed_at",
        ]

    def to_representation(self, task: Task) -> dict[str, Any]:
        request = self.context.get("request")
        viewer_id = request.user.pk if request and request.user else None
        return task_item({column: getattr(task, column) for column in TASK_COLUMNS}, viewer_id)
