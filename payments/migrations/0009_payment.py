"""Payments move here from `tasks_market` (docs/decisions.md#one-money-app). The table and its rows stay as
they are: `tasks_market` 0010 gave the table its new columns and dropped the model from its state (it runs
before this one); this migration takes the model into this app's state, changing nothing in the database,
and moves its content type, so that staff permissions granted on payments and the admin's history of them
follow the model."""

import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


def _move(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label=new, model="payment").exists():
        ContentType.objects.filter(app_label=old, model="payment").update(app_label=new)


def move_content_type(apps, schema_editor):
    _move(apps, "tasks_market", "payments")


def move_content_type_back(apps, schema_editor):
    _move(apps, "payments", "tasks_market")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("payments", "0008_money_rows_never_deleted"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Payment",
                    fields=[
                        ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ("source", models.CharField(help_text="What is paid for, e.g. task:<uuid>.", max_length=80)),
                        (
                            "reference",
                            models.CharField(
                                help_text="The offer the amount was agreed in, e.g. bid:<uuid>.", max_length=80
                            ),
                        ),
                        ("provider", models.CharField(max_length=20)),
                        ("provider_payment_id", models.CharField(max_length=255, unique=True)),
                        ("amount", models.DecimalField(decimal_places=2, max_digits=12)),
                        ("currency", models.CharField(max_length=3)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("requires_payment", "Requires payment"),
                                    ("succeeded", "Succeeded"),
                                    ("failed", "Failed"),
                                    ("cancelled", "Cancelled"),
                                    ("released", "Released"),
                                    ("refunded", "Refunded"),
                                ],
                                default="requires_payment",
                                max_length=20,
                            ),
                        ),
                        ("client_secret", models.CharField(blank=True, max_length=255)),
                        ("checkout_url", models.URLField(blank=True, max_length=2000)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("succeeded_at", models.DateTimeField(blank=True, null=True)),
                        ("released_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "mismatch_reason",
                            models.CharField(
                                blank=True,
                                help_text="Why the last provider success event for this payment was refused (its amount or currency did not match); blank when none was.",
                                max_length=500,
                            ),
                        ),
                        (
                            "mismatch_event_id",
                            models.CharField(blank=True, help_text="The refused event's id.", max_length=255),
                        ),
                        ("mismatch_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "refund_due_at",
                            models.DateTimeField(
                                blank=True,
                                help_text="When a success arrived that nothing waited for any more (the task was cancelled, or another payment secured it): the refund is due, made outside the event's transaction; cleared once refunded or refused by the provider.",
                                null=True,
                            ),
                        ),
                        ("captured_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "refunded_amount",
                            models.DecimalField(db_default=0, decimal_places=2, default=0, max_digits=12),
                        ),
                        ("fee_percent", models.DecimalField(blank=True, decimal_places=3, max_digits=6, null=True)),
                        ("fee_minimum", models.DecimalField(blank=True, decimal_places=3, max_digits=12, null=True)),
                        (
                            "payee",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="payments_received",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "payer",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="payments_made",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "tasks_market_payment",
                        "ordering": ["-created_at"],
                        "indexes": [
                            models.Index(fields=["source", "-created_at"], name="payment_source_created"),
                            models.Index(fields=["reference"], name="payment_reference"),
                            models.Index(
                                condition=models.Q(("refund_due_at__isnull", False)),
                                fields=["refund_due_at"],
                                name="payment_refund_due",
                            ),
                            models.Index(fields=["-created_at", "-id"], name="payment_created_desc"),
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
