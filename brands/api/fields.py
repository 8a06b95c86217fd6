"""Serializer fields shared by the brands API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from brands.domain.matching import normalize_domain

# The forms DomainField takes, for the schema: a host name with at least one dot, optionally with a scheme and
# a path ("acme.com", "https://www.acme.com/about"). The field itself parses with urlsplit and checks the host.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DOMAIN_PATTERN = rf"^(?:https?://)?(?:{_LABEL}\.)+{_LABEL}\.?(?:/[!-~]*)?$"


@extend_schema_field({"type": "string", "maxLength": 253, "pattern": DOMAIN_PATTERN})
class DomainField(serializers.CharField):
    """A host name (scheme, path and "www." are dropped: `https://www.Acme.com/x` → `acme.com`)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 253)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value:
            return value
        domain = normalize_domain(value)
        if not domain:
            raise serializers.ValidationError("Enter a domain name such as example.com.", code="domain")
        return domain


class OptionalTextField(serializers.CharField):
    """A text field stored as "" when empty and rendered as null then."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value or None


def social_links_field(**kwargs) -> serializers.DictField:
    return serializers.DictField(
        child=serializers.CharField(max_length=500, allow_blank=True),
        help_text='Platform name → profile URL, e.g. {"instagram": "https://instagram.com/acme"}.',
        **kwargs,
    )
