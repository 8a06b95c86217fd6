from __future__ import annotations

from rest_framework import serializers

from brands.models import ConnectedAccount, ConnectedPlatform, ConnectionHealth

HEALTH_HELP = "; ".join(f"`{v}`: {label}" for v, label in ConnectionHealth.choices)


class ConnectedAccountSerializer(serializers.ModelSerializer):
    """A connected account as the API shows it: never a token (docs/decisions.md#connected-accounts)."""

    health = serializers.ChoiceField(choices=ConnectionHealth.choices, help_text=HEALTH_HELP)
    last_error = serializers.CharField(help_text="The platform's last refusal; empty when healthy.")

    class Meta:
        model = ConnectedAccount
        fields = (
            "id",
            "platform",
            "account_id",
            "account_name",
            "token_expires_at",
            "health",
            "last_error",
            "last_checked_at",
            "simulated",
            "created_at",
            "updated_at",
        )
        read_only_fields = fields


class ConnectAuthorizeInput(serializers.Serializer):
    platform = serializers.ChoiceField(
        choices=ConnectedPlatform.choices,
        help_text="`facebook_page` and `instagram` both open Meta's consent, which connects the pages the owner picks "
        "and their Instagram professional accounts; `linkedin` connects the LinkedIn member.",
    )


class ConnectAuthorizeSerializer(serializers.Serializer):
    authorization_url = serializers.URLField(help_text="Send the owner's browser here to give consent.")
    state = serializers.CharField(
        help_text="Signed, single-use, valid 10 minutes by default; it comes back on the callback."
    )
    simulated = serializers.BooleanField(
        help_text="True with the local OAuth stand-in: the consent page is this server's and the account posts nowhere."
    )


class OAuthCallbackQuery(serializers.Serializer):
    state = serializers.CharField(max_length=4000)
    code = serializers.CharField(max_length=4000, required=False, help_text="Absent when the owner refused consent.")
    error = serializers.CharField(max_length=200, required=False, help_text="The platform's error, e.g. access_denied.")
    error_description = serializers.CharField(max_length=1000, required=False)


class OAuthConsentQuery(serializers.Serializer):
    state = serializers.CharField(max_length=4000)


class OAuthCallbackSerializer(serializers.Serializer):
    brand_id = serializers.UUIDField()
    connected_accounts = ConnectedAccountSerializer(many=True, help_text="The accounts stored or given new tokens.")
    simulated = serializers.BooleanField(help_text="True when they were connected through the local stand-in.")
