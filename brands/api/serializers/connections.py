from __future__ import annotations

from rest_framework import serializers

from brands.models import ConnectedAccount, ConnectionHealth

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
            "created_at",
            "updated_at",
        )
        read_only_fields = fields
