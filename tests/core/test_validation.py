"""The 422 translation for field kinds the endpoints have not exercised yet."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from core.api.validation import GreaterThan, RequestValidationError, validate


class Item(serializers.Serializer):
    url = serializers.CharField()


class Body(serializers.Serializer):
    items = Item(many=True, min_length=1, max_length=2)
    ratio = serializers.FloatField(validators=[GreaterThan(0)], required=False)
    kind = serializers.ChoiceField(choices=["a", "b", "c"], required=False)


def errors_for(data):
    with pytest.raises(RequestValidationError) as caught:
        validate(Body, data, loc="body")
    return caught.value.errors


def test_nested_list_length_limits():
    assert errors_for({"items": []}) == [
        {
            "type": "too_short",
            "loc": ["body", "items"],
            "msg": "List should have at least 1 item after validation, not 0",
            "input": [],
            "ctx": {"field_type": "List", "min_length": 1, "actual_length": 0},
        }
    ]
    [too_long] = errors_for({"items": [{"url": "a"}] * 3})
    assert (too_long["type"], too_long["ctx"]["max_length"], too_long["ctx"]["actual_length"]) == ("too_long", 2, 3)


def test_nested_item_errors_carry_their_index():
    [item_error] = errors_for({"items": [{"url": "a"}, {}]})

    assert item_error["loc"] == ["body", "items", 1, "url"]
    assert item_error["type"] == "missing"


def test_exclusive_bound_and_literal():
    ratio, kind = errors_for({"items": [{"url": "a"}], "ratio": 0, "kind": "z"})

    assert ratio == {
        "type": "greater_than",
        "loc": ["body", "ratio"],
        "msg": "Input should be greater than 0",
        "input": 0,
        "ctx": {"gt": 0},
    }
    assert kind == {
        "type": "literal_error",
        "loc": ["body", "kind"],
        "msg": "Input should be 'a', 'b' or 'c'",
        "input": "z",
        "ctx": {"expected": "'a', 'b' or 'c'"},
    }
