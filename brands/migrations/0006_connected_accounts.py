"""Connected accounts: a brand's social platform accounts, their tokens encrypted at rest (new table only)."""

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("brands", "0005_researchitem_attempts"),
    ]

    operations = [
        migrations.CreateModel(
            name="ConnectedAccount",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                (
                    "platform",
                    models.CharField(
                        choices=[
                            ("facebook_page", "Facebook Page"),
                            ("instagram", "Instagram professional account"),
                            ("linkedin", "LinkedIn member or organization"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "account_id",
                    models.CharField(help_text="The platform's id: page id, IG user id or author URN.", max_length=200),
                ),
                ("account_name", models.CharField(blank=True, max_length=200)),
                (
                    "access_token_encrypted",
                    models.TextField(help_text="Fernet token of the access token; never shown."),
                ),
                (
                    "refresh_token_encrypted",
                    models.TextField(blank=True, help_text="Fernet token of the refresh token; never shown."),
                ),
                ("token_expires_at", models.DateTimeField(blank=True, null=True)),
                (
                    "health",
                    models.CharField(
                        choices=[
                            ("healthy", "Healthy: the last call with its token worked"),
                            ("unknown", "Unknown: not checked yet"),
                            ("token_expired", "The token expired or was revoked and could not be refreshed: reconnect"),
                            ("error", "The platform refused the last call (see last_error)"),
                        ],
                        default="unknown",
                        max_length=20,
                    ),
                ),
                ("last_error", models.TextField(blank=True)),
                ("last_checked_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "brand",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="connected_accounts",
                        to="brands.brand",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["brand", "-created_at", "-id"], name="connected_account_brand_list")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("brand", "platform", "account_id"), name="connected_account_once_per_brand"
                    )
                ],
            },
        ),
    ]
