from __future__ import annotations

import json

from django.contrib import admin, messages
from django.utils.html import format_html

from scrapers.models import LocalScrapeJob, Snapshot
from scrapers.services import snapshot_refresh


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    """Snapshots are triggered through the API; here staff watch them and refresh them from the provider."""

    list_display = (
        "snapshot_id",
        "provider",
        "dataset_id",
        "status",
        "provider_status",
        "records_count",
        "errors_count",
        "created_by",
        "created_at",
        "next_poll_at",
    )
    list_filter = ("status", "provider", "created_at")
    search_fields = ("snapshot_id", "dataset_id")
    list_select_related = ("created_by",)
    date_hierarchy = "created_at"
    exclude = ("results",)
    readonly_fields = (
        "provider",
        "snapshot_id",
        "dataset_id",
        "pretty_inputs",
        "status",
        "provider_status",
        "records_count",
        "errors_count",
        "error_message",
        "created_by",
        "created_at",
        "updated_at",
        "last_polled_at",
        "next_poll_at",
        "poll_attempts",
        "deadline_at",
        "completed_at",
        "results_fetched_at",
        "pretty_results",
    )
    actions = ["refresh_from_provider"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        # The downloaded records can be large: only the change page shows them.
        url_name = getattr(request.resolver_match, "url_name", None) or ""
        return queryset if url_name.endswith("_change") else queryset.defer("results")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False if obj is not None else super().has_change_permission(request, obj)

    @admin.display(description="Inputs")
    def pretty_inputs(self, obj: Snapshot):
        return format_html("<pre>{}</pre>", json.dumps(obj.inputs, indent=2))

    @admin.display(description="Results")
    def pretty_results(self, obj: Snapshot):
        if obj.results is None:
            return "-"
        return format_html("<pre>{}</pre>", json.dumps(obj.results, indent=2)[:200_000])

    @admin.action(description="Refresh from provider")
    def refresh_from_provider(self, request, queryset):
        refreshed, stale = 0, []
        for snapshot in queryset.defer("results"):
            state = snapshot_refresh(snapshot=snapshot)
            if state.stale:
                stale.append(f"{snapshot.snapshot_id}: {state.stale_reason}")
            elif state.live:
                refreshed += 1
        self.message_user(request, f"Asked the provider about {refreshed} running snapshot(s).")
        for line in stale:
            self.message_user(request, f"Not refreshed, {line}", level=messages.WARNING)


@admin.register(LocalScrapeJob)
class LocalScrapeJobAdmin(admin.ModelAdmin):
    """The local provider's side of snapshots: what was fetched, per input."""

    list_display = ("id", "dataset_id", "status", "records_count", "errors_count", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("id", "dataset_id")
    readonly_fields = [f.name for f in LocalScrapeJob._meta.fields] + ["outcomes"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False if obj is not None else super().has_change_permission(request, obj)
