"""Agent reputation from verified outcomes and the posters' reviews (docs/decisions.md#agent-reputation,
docs/decisions.md#reviews): three new tables, nothing existing changes."""

import uuid
from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_market", "0012_saved_searches"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AgentReputation",
            fields=[
                (
                    "agent",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="reputation",
                        serialize=False,
                        to="tasks_market.agent",
                    ),
                ),
                ("completed_tasks", models.PositiveIntegerField(default=0)),
                ("approved_without_revision", models.PositiveIntegerField(default=0)),
                (
                    "on_time",
                    models.PositiveIntegerField(default=0, help_text="Completed tasks delivered before the deadline."),
                ),
                ("disputes_refund_full", models.PositiveIntegerField(default=0)),
                ("disputes_release_full", models.PositiveIntegerField(default=0)),
                ("disputes_split", models.PositiveIntegerField(default=0)),
                ("rating_count", models.PositiveIntegerField(default=0)),
                ("rating_weight_sum", models.DecimalField(decimal_places=4, default=Decimal("0"), max_digits=16)),
                ("rating_weighted_sum", models.DecimalField(decimal_places=4, default=Decimal("0"), max_digits=16)),
                ("score", models.DecimalField(decimal_places=4, default=Decimal("3.5"), max_digits=6)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.CreateModel(
            name="Review",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("rating", models.PositiveSmallIntegerField()),
                ("comment", models.TextField(blank=True)),
                (
                    "comment_hidden",
                    models.BooleanField(default=False, help_text="Hidden by staff; the rating still counts."),
                ),
                ("weight", models.DecimalField(decimal_places=4, max_digits=8)),
                ("editable_until", models.DateTimeField()),
                ("reply", models.TextField(blank=True)),
                ("replied_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="reviews", to="tasks_market.agent"
                    ),
                ),
                (
                    "poster",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "task",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="review", to="tasks_market.task"
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["agent", "-created_at", "-id"], name="tasks_marke_agent_i_937e06_idx"),
                    models.Index(fields=["-created_at", "-id"], name="review_created_desc"),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("rating__gte", 1), ("rating__lte", 5)), name="review_rating_1_to_5"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="TaskOutcome",
            fields=[
                (
                    "task",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="outcome",
                        serialize=False,
                        to="tasks_market.task",
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("approved", "Approved by the poster (or released by the review window)"),
                            ("release_full", "Disputed, released in full to the seller"),
                            ("split", "Disputed, split"),
                            ("refund_full", "Disputed, refunded in full to the poster"),
                        ],
                        max_length=20,
                    ),
                ),
                ("counted", models.BooleanField(default=True)),
                (
                    "not_counted",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("self_dealt", "The poster owns the agent"),
                            ("refunded_in_full", "Refunded in full after release"),
                        ],
                        max_length=20,
                    ),
                ),
                ("revisions", models.PositiveSmallIntegerField(default=0)),
                ("on_time", models.BooleanField(help_text="The last submission came before the task's deadline.")),
                (
                    "delivery_seconds",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="From the payment's success (the delivery's creation) to the last submission.",
                        null=True,
                    ),
                ),
                (
                    "amount",
                    models.DecimalField(decimal_places=2, help_text="The money at stake (the payment).", max_digits=12),
                ),
                ("currency", models.CharField(max_length=3)),
                (
                    "weight",
                    models.DecimalField(decimal_places=4, help_text="log10(10 + amount), 4 places.", max_digits=8),
                ),
                ("recorded_at", models.DateTimeField()),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="outcomes", to="tasks_market.agent"
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["agent", "counted", "delivery_seconds"], name="outcome_agent_delivery")
                ],
            },
        ),
    ]
