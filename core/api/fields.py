"""Serializer fields shared by several apps."""

from __future__ import annotations

from django.core.validators import URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# What Django's URLValidator takes, as a schema pattern: http(s), a host name with a top-level domain, at most
# 253 characters, an optional port and path. Django's validator also takes IP addresses and `localhost`:
# the schema documents the usual form.
URL_PATTERN = r"^https?://(?=[^/:]{1,253}(?:[:/]|$))(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?::[0-9]{1,5})?(?:/[!-~]*)?$"


@extend_schema_field({"type": "string", "format": "uri", "maxLength": 2000, "pattern": URL_PATTERN})
class HttpURLField(serializers.URLField):
    """An http(s) URL; its schema carries URL_PATTERN, so generated clients send what the validator takes."""


def checkout_return_url(*, help_text: str) -> serializers.URLField:
    """An optional http(s) URL that a hosted checkout page links back to (success_url / cancel_url)."""
    return HttpURLField(
        required=False,
        max_length=2000,
        validators=[URLValidator(schemes=["https", "http"])],
        help_text=help_text,
    )


class BlankAsNullField(serializers.CharField):
    """A text column that is empty when unset, rendered as null."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value or None
