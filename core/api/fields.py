"""Serializer fields shared by several apps."""

from __future__ import annotations

from django.core.validators import URLValidator
from rest_framework import serializers


def checkout_return_url(*, help_text: str) -> serializers.URLField:
    """An optional http(s) URL that a hosted checkout page links back to (success_url / cancel_url)."""
    return serializers.URLField(
        required=False,
        max_length=2000,
        validators=[URLValidator(schemes=["https", "http"])],
        help_text=help_text,
    )
