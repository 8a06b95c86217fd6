from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class TeamStatus(models.TextChoices):
    ONBOARDING = "onboarding", "Onboarding"  # hired; the subscription is not active yet
    ACTIVE = "active", "Active"
    PAUSED = "paused", "Paused"
    CANCELLING = "cancelling", "Cancelling"  # unsubscribed; runs until subscription_ends_at
    CANCELLED = "cancelled", "Cancelled"
    PAST_DUE = "past_due", "Past due"  # the last invoice failed


class TeamType(models.TextChoices):
    MARKETING = "marketing", "Marketing"
    CONTENT = "content", "Content"
    PAID_MEDIA = "paid_media", "Paid media"
    SEO = "seo", "SEO"
    SOCIAL = "social", "Social"


class Tier(models.TextChoices):
    STARTER = "starter", "Starter"
    GROWTH = "growth", "Growth"
    SCALE = "scale", "Scale"


class OperationMode(models.TextChoices):
    AUTONOMOUS = "autonomous", "Autonomous"  # agents act and publish on their own
    SUPERVISED = "supervised", "Supervised"  # agents act; a person approves before publishing
    MANUAL = "manual", "Manual"  # agents only suggest


class WorkflowPhase(models.TextChoices):
    DISCOVERY = "discovery", "Discovery"
    STRATEGY = "strategy", "Strategy"
    PRODUCTION = "production", "Content production"
    OPTIMIZATION = "optimization", "Optimization"
    REPORTING = "reporting", "Reporting"


class TriggerMode(models.TextChoices):
    SCHEDULED = "scheduled", "Scheduled"
    EVENT = "event", "On events"
    MANUAL = "manual", "Manual"


class OnboardingStep(models.TextChoices):
    CONNECT_ACCOUNTS = "connect_accounts", "Connect accounts"
    BRAND_KIT = "brand_kit", "Brand kit"
    GOALS = "goals", "Goals"
    REVIEW = "review", "Review"
    DONE = "done", "Done"


MAX_RESEARCH_EVERY_HOURS = 24 * 30


class Team(models.Model):
    """An agent team a user hired, paid for by a subscription at the payment provider."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="teams")
    team_type = models.CharField(max_length=20, choices=TeamType.choices)
    display_name = models.CharField(max_length=120)
    status = models.CharField(max_length=20, choices=TeamStatus.choices, default=TeamStatus.ONBOARDING)
    tier = models.CharField(max_length=20, choices=Tier.choices, default=Tier.STARTER)
    operation_mode = models.CharField(max_length=20, choices=OperationMode.choices, default=OperationMode.SUPERVISED)
    workflow_phase = models.CharField(max_length=20, choices=WorkflowPhase.choices, default=WorkflowPhase.DISCOVERY)
    trigger_mode = models.CharField(max_length=20, choices=TriggerMode.choices, default=TriggerMode.SCHEDULED)
    default_currency = models.CharField(max_length=3, default="usd")
    auto_config = models.JSONField(default=dict, blank=True)
    # {"research_every_hours": N} (1..MAX_RESEARCH_EVERY_HOURS) or {}: no recurring research
    # (docs/decisions.md#team-cadence). The API validates it; `research_every_hours` reads it defensively.
    orchestrator_cadence = models.JSONField(default=dict, blank=True)
    content_strategy = models.JSONField(default=dict, blank=True)
    config = models.JSONField(default=dict, blank=True)
    onboarding_step = models.CharField(
        max_length=20, choices=OnboardingStep.choices, default=OnboardingStep.CONNECT_ACCOUNTS
    )
    connected_accounts = models.JSONField(default=list, blank=True)
    # Set when a brand kit is linked to the team (brands app); kept here so a team reads in one query.
    brand_kit_id = models.UUIDField(null=True, blank=True)
    brand_id = models.UUIDField(null=True, blank=True)
    brand_name = models.CharField(max_length=200, blank=True)

    payments_subscription_id = models.CharField(max_length=100, blank=True, db_index=True)
    checkout_url = models.URLField(
        max_length=2000, blank=True, help_text="The provider's hosted page where the owner pays the subscription."
    )
    subscription_status = models.CharField(max_length=30, blank=True, help_text="As the provider last reported it.")
    # `created` of the last provider event applied: an older event never rolls the team back.
    subscription_event_at = models.DateTimeField(null=True, blank=True)

    hired_at = models.DateTimeField(null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    subscription_ends_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["owner", "-created_at"]),
            models.Index(fields=["status", "subscription_ends_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.get_status_display()})"

    @property
    def workflow_phase_label(self) -> str:
        return self.get_workflow_phase_display()

    @property
    def research_every_hours(self) -> int | None:
        """The cadence of recurring research, or None: not set, or not a valid value (an admin edit)."""
        cadence = self.orchestrator_cadence if isinstance(self.orchestrator_cadence, dict) else {}
        hours = cadence.get("research_every_hours")
        if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_RESEARCH_EVERY_HOURS:
            return None
        return hours

    @property
    def usable_connected_accounts(self) -> list[dict]:
        """The connected accounts that name a platform and an account on it (`account_id`, `id` or `handle`):
        only these make the team ready to act on social platforms; `{}` or `{"platform": "x"}` does not."""
        accounts = self.connected_accounts if isinstance(self.connected_accounts, list) else []
        return [
            account
            for account in accounts
            if isinstance(account, dict)
            and _text(account.get("platform"))
            and any(_text(account.get(key)) for key in ("account_id", "id", "handle"))
        ]


def _text(value) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip() != ""
