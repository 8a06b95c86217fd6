from __future__ import annotations

from django.conf import settings
from django.db import connection
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.addresses import domain_problem
from accounts.models import ApiKey, User
from accounts.registry import credits_keeper
from accounts.selectors import RECOVERY_REVIEW_PERIOD, recovery_review_of
from accounts.services import password_problems


def _mailable(email: str) -> str:
    problem = domain_problem(email)
    if problem:
        raise serializers.ValidationError(problem, code="domain_not_idna")
    return email


class RegisterInput(serializers.Serializer):
    email = serializers.EmailField(
        max_length=254,
        help_text="Kept as given; its domain must be a valid IDNA 2008 name. Mailed a verification token.",
    )
    password = serializers.CharField(
        min_length=8,
        max_length=128,
        trim_whitespace=False,
        help_text="8 to 128 characters, not only digits, not a commonly used password, not close to the e-mail.",
    )

    # What the schema can say of Django's password validators (AUTH_PASSWORD_VALIDATORS): not only digits.
    # "Not common" and "not like the e-mail" are in the description; the server checks all four.
    openapi_extra = {"properties": {"password": {"pattern": r"\D", "examples": ["correct horse battery staple"]}}}

    def validate_email(self, value):
        return _mailable(value)

    def validate(self, attrs):
        problems = password_problems(password=attrs["password"], email=attrs["email"])
        if problems:
            raise serializers.ValidationError({"password": problems}, code="password_rejected")
        return attrs


class ReviewItemSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["webhook_subscription", "agent_endpoint"],
        help_text="`webhook_subscription` (under /api/v1/webhooks/subscriptions) or `agent_endpoint` (an agent's "
        "`endpoint_url`, under /api/v1/agents).",
    )
    id = serializers.UUIDField(help_text="The subscription's or the agent's id.")
    url = serializers.URLField(help_text="Where the account's events or won tasks are sent.")


class RecoveryReviewSerializer(serializers.Serializer):
    recovered_at = serializers.DateTimeField(help_text="When the password was reset.")
    shown_until = serializers.DateTimeField(help_text="After this the field is null again.")
    items = ReviewItemSerializer(many=True, help_text="Every URL the account sends data to now; may be empty.")


class CreditBalanceField(serializers.IntegerField):
    """The account's credits, from the app that keeps them (accounts.registry), as the integer column they
    are: 0 up to the database's largest positive integer, as a model's PositiveIntegerField is described."""

    def __init__(self, **kwargs):
        super().__init__(min_value=0, max_value=connection.ops.integer_field_range("PositiveIntegerField")[1], **kwargs)

    def get_attribute(self, instance: User) -> int:
        return credits_keeper().balance(user=instance)


class UserSerializer(serializers.ModelSerializer):
    created_at = serializers.DateTimeField(source="date_joined")
    email = serializers.EmailField(help_text="The address as given at registration or the last change.")
    email_verified = serializers.BooleanField(
        read_only=True,
        help_text="Whether a token mailed to the address came back (`POST /auth/email/verify`) or a reset mailed "
        "to it was completed. Until then: no API keys, no payout account, no sign-up credits.",
    )
    review_after_recovery = serializers.SerializerMethodField(
        help_text=f"For {RECOVERY_REVIEW_PERIOD.days} days after a password reset: where the account sends data, "
        "for you to check that you set up each one (the reset revoked every session and API key, not these). "
        "Null otherwise."
    )

    class Meta:
        model = User
        fields = ["id", "email", "email_verified", "is_staff", "credits", "created_at", "review_after_recovery"]

    def build_field(self, field_name, info, model_class, nested_depth):
        # Built where the column was, as the column's field was, so the document says what it said then.
        if field_name == "credits":
            return CreditBalanceField, {"required": False}
        return super().build_field(field_name, info, model_class, nested_depth)

    @extend_schema_field(RecoveryReviewSerializer(allow_null=True))
    def get_review_after_recovery(self, user) -> dict | None:
        review = recovery_review_of(user)
        return None if review is None else RecoveryReviewSerializer(review).data


class TokenInput(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    password = serializers.CharField(max_length=128, trim_whitespace=False)


class RefreshInput(serializers.Serializer):
    refresh = serializers.CharField(max_length=4096)


class TokenPairSerializer(serializers.Serializer):
    access = serializers.CharField()
    refresh = serializers.CharField()
    token_type = serializers.ChoiceField(choices=["Bearer"])
    expires_in = serializers.IntegerField(help_text="Seconds until the access token expires.")

    @staticmethod
    def payload(refresh) -> dict:
        lifetime = int(settings.SIMPLE_JWT["ACCESS_TOKEN_LIFETIME"].total_seconds())
        access = refresh.access_token
        if access["exp"] > refresh["exp"]:  # no access token outlives its session's end
            lifetime -= access["exp"] - refresh["exp"]
            access.payload["exp"] = refresh["exp"]
        return {
            "access": str(access),
            "refresh": str(refresh),
            "token_type": "Bearer",
            "expires_in": max(0, lifetime),
        }


class ApiKeyInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class ApiKeySerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "created_at", "last_used_at"]


class IssuedApiKeySerializer(serializers.Serializer):
    """Renders an `IssuedKey`: the stored key plus the raw key, which exists only in this response."""

    id = serializers.UUIDField(source="api_key.id")
    name = serializers.CharField(source="api_key.name")
    prefix = serializers.CharField(source="api_key.prefix")
    key = serializers.CharField(source="raw", help_text="The raw key. Shown only in this response; store it now.")
    created_at = serializers.DateTimeField(source="api_key.created_at")


class UserUpdateInput(serializers.Serializer):
    email = serializers.EmailField(
        max_length=254,
        required=False,
        help_text="The new e-mail address, kept as given (its domain a valid IDNA 2008 name); unverified until "
        "the token mailed to it comes back.",
    )
    current_password = serializers.CharField(
        max_length=128,
        trim_whitespace=False,
        help_text="Required for any change; a wrong one counts as a failed login.",
    )

    def validate_email(self, value):
        return _mailable(value)


class CurrentPasswordInput(serializers.Serializer):
    current_password = serializers.CharField(max_length=128, trim_whitespace=False)


_NEW_PASSWORD_HELP = "8 to 128 characters, not only digits, not a commonly used password, not close to the e-mail."


class PasswordChangeInput(serializers.Serializer):
    current_password = serializers.CharField(max_length=128, trim_whitespace=False)
    new_password = serializers.CharField(
        min_length=8, max_length=128, trim_whitespace=False, help_text=_NEW_PASSWORD_HELP
    )


class LogoutInput(serializers.Serializer):
    refresh = serializers.CharField(max_length=4096, help_text="The refresh token of the session to end.")


class PasswordResetInput(serializers.Serializer):
    email = serializers.EmailField(max_length=254)


class PasswordResetConfirmInput(serializers.Serializer):
    token = serializers.CharField(max_length=200, help_text="The token from the reset mail, `<uid>.<token>`.")
    new_password = serializers.CharField(
        min_length=8, max_length=128, trim_whitespace=False, help_text=_NEW_PASSWORD_HELP
    )


class EmailVerifyInput(serializers.Serializer):
    token = serializers.CharField(max_length=200, help_text="The token from the verification mail.")


class AcceptedSerializer(serializers.Serializer):
    detail = serializers.CharField()
