"""Fields and artefacts shared by the marketplace serializers."""

from __future__ import annotations

import hashlib
import re

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.api.fields import URL_PATTERN, BlankAsNullField
from core.api.validation import GreaterThan
from core.http.outbound import UnsafeURL, check_url
from payments.fees import fee_split
from payments.money import exponent
from tasks_market.models import Artefact
from tasks_market.models.market import CURRENCIES

MAX_AMOUNT = 1_000_000
# ASCII classes only: the same patterns are the schema's (JSON Schema regexes are ECMA-262, where \w is ASCII).
_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*/[A-Za-z0-9][A-Za-z0-9_.+-]*( *;[^\n]*)?$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


class MoneyField(serializers.DecimalField):
    """An amount above 0 in major units: its schema (a decimal string or a number) is core.api.schema's money."""

    def __init__(self, **kwargs):
        super().__init__(
            max_digits=12,
            decimal_places=2,
            coerce_to_string=False,
            max_value=MAX_AMOUNT,
            validators=[GreaterThan(0)],
            **kwargs,
        )


class FeePartField(serializers.DecimalField):
    """The platform's `fee` or the seller's `net` of the row's amount (payments.fees.fee_split, the one
    rule: docs/payouts.md#the-fee), read-only, in the shape of `amount`: by the terms the row's payment
    pinned at selection when it has them (`terms`: the row → FeeTerms or None), else today's settings."""

    def __init__(self, part: str, *, amount: str = "amount", terms=None, **kwargs):
        self.part, self.amount_attr, self.terms = part, amount, terms
        super().__init__(max_digits=12, decimal_places=2, source="*", read_only=True, **kwargs)

    def to_representation(self, instance):
        terms = self.terms(instance) if self.terms else None
        split = fee_split(amount=getattr(instance, self.amount_attr), currency=instance.currency, terms=terms)
        return super().to_representation(getattr(split, self.part))


def money_field(**kwargs) -> serializers.DecimalField:
    return MoneyField(**kwargs)


def whole_amounts_in(amount: str, currency: str) -> dict:
    """Schema: in a currency without minor units (jpy; payments.money's table) the amount is a whole number
    (check_amount_places)."""
    whole = [code for code in CURRENCIES if exponent(code) == 0]
    return {
        "if": {"properties": {currency: {"enum": whole}}, "required": [currency]},
        "then": {"properties": {amount: {"multipleOf": 1, "pattern": r"^[0-9]+(?:\.00?)?$"}}},
    }


def safe_endpoint(value: str) -> str:
    try:
        check_url(value, schemes=("https",))
    except UnsafeURL as exc:
        raise serializers.ValidationError(str(exc), code="unsafe_url") from exc
    return value


# --- Artefacts -------------------------------------------------------------------------------------


class ArtefactInput(serializers.Serializer):
    """A file by `url` (give its `size` and `sha256`) or inline `text` (size and sha256 are computed,
    and checked when given)."""

    # For the schema (core.api.schema.AutoSchema): exactly one of the two forms. With `text`, the schema
    # leaves `size` and `sha256` out; the server computes them (and accepts them only when they match).
    openapi_extra = {
        "properties": {"url": {"pattern": URL_PATTERN}},
        "oneOf": [
            {"required": ["url", "size", "sha256"], "not": {"required": ["text"]}},
            {
                "required": ["text"],
                "not": {"anyOf": [{"required": ["url"]}, {"required": ["size"]}, {"required": ["sha256"]}]},
            },
        ],
    }

    name = serializers.CharField(max_length=255)
    content_type = serializers.CharField(
        max_length=100,
        validators=[RegexValidator(_MEDIA_TYPE, "Give a media type such as text/plain.", code="media_type")],
        help_text="A media type, e.g. text/markdown.",
    )
    url = serializers.URLField(max_length=2000, required=False)
    text = serializers.CharField(max_length=100_000, required=False, trim_whitespace=False)
    size = serializers.IntegerField(min_value=0, max_value=10**12, required=False, help_text="Bytes.")
    sha256 = serializers.CharField(
        min_length=64,
        max_length=64,
        required=False,
        validators=[RegexValidator(_HEX64, "Give 64 hexadecimal characters.", code="sha256")],
        help_text="Hex SHA-256.",
    )

    def validate_url(self, value: str) -> str:
        if not value.lower().startswith(("https://", "http://")):
            raise serializers.ValidationError("The URL must be http or https.", code="url_scheme")
        return value

    def validate_sha256(self, value: str) -> str:
        return value.lower()

    def validate(self, attrs):
        if ("url" in attrs) == ("text" in attrs):
            raise serializers.ValidationError("Give exactly one of `url` and `text`.", code="url_or_text")
        if "text" in attrs:
            data = attrs["text"].encode()
            size, digest = len(data), hashlib.sha256(data).hexdigest()
            if attrs.get("size", size) != size or attrs.get("sha256", digest) != digest:
                raise serializers.ValidationError("`size` or `sha256` does not match `text`.", code="checksum")
            return {**attrs, "size": size, "sha256": digest}
        missing = {name: ["Field required"] for name in ("size", "sha256") if name not in attrs}
        if missing:
            raise serializers.ValidationError(missing, code="required")
        return attrs


class ArtefactSerializer(serializers.ModelSerializer):
    url = BlankAsNullField()
    text = BlankAsNullField()

    class Meta:
        model = Artefact
        fields = ["id", "name", "content_type", "url", "text", "size", "sha256", "created_at"]
