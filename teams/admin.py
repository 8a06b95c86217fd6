from __future__ import annotations

from django.contrib import admin, messages

from core.http.errors import DomainError
from teams import services
from teams.models import Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = (
        "display_name",
        "owner",
        "team_type",
        "tier",
        "status",
        "brand_name",
        "subscription_ends_at",
        "created_at",
    )
    list_filter = ("status", "tier", "team_type", "operation_mode")
    search_fields = ("display_name", "brand_name", "owner__email", "payments_subscription_id")
    list_select_related = ("owner",)
    date_hierarchy = "created_at"
    readonly_fields = (
        "id",
        "owner",
        "status",
        "payments_subscription_id",
        "subscription_status",
        "subscription_event_at",
        "hired_at",
        "paused_at",
        "cancelled_at",
        "subscription_ends_at",
        "created_at",
        "updated_at",
    )
    fieldsets = (
        (None, {"fields": ("id", "owner", "display_name", "team_type", "tier", "status")}),
        (
            "Operation",
            {
                "fields": (
                    "operation_mode",
                    "workflow_phase",
                    "trigger_mode",
                    "onboarding_step",
                    "default_currency",
                    "config",
                    "auto_config",
                    "orchestrator_cadence",
                    "content_strategy",
                    "connected_accounts",
                )
            },
        ),
        ("Brand", {"fields": ("brand_kit_id", "brand_id", "brand_name")}),
        (
            "Subscription (from the payment provider; read-only)",
            {
                "fields": (
                    "payments_subscription_id",
                    "subscription_status",
                    "subscription_event_at",
                    "hired_at",
                    "paused_at",
                    "cancelled_at",
                    "subscription_ends_at",
                    "created_at",
                    "updated_at",
                )
            },
        ),
    )
    actions = ["unsubscribe", "reactivate"]

    def _run(self, request, queryset, service, verb: str) -> None:
        done = 0
        for team in queryset.select_related("owner"):
            try:
                service(team_id=team.id, owner=team.owner)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{team.display_name}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{verb} {done} team(s).")

    @admin.action(description="Unsubscribe at period end (tells the payment provider)")
    def unsubscribe(self, request, queryset):
        self._run(request, queryset, services.team_unsubscribe, "Unsubscribed")

    @admin.action(description="Reactivate (tells the payment provider)")
    def reactivate(self, request, queryset):
        self._run(request, queryset, services.team_reactivate, "Reactivated")
