from __future__ import annotations

from django.contrib import admin

from core.admin import BoundedCountPaginator, fixed_values_filter
from webhooks_app.delivery import webhook_delivery_replay
from webhooks_app.event_types import EVENT_TYPES
from webhooks_app.inbound import inbound_events_reprocess
from webhooks_app.models import (
    InboundDelivery,
    InboundEvent,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
    WebhookSubscription,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records of what happened: seen and acted on through actions, never edited by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(InboundEvent)
class InboundEventAdmin(ReadOnlyAdmin):
    list_display = ("event_id", "type", "status", "object_id", "attempts", "created", "received_at", "processed_at")
    list_filter = ("type", "status")
    search_fields = ("event_id", "object_id")
    date_hierarchy = "received_at"
    actions = ["reprocess"]

    @admin.action(description="Re-process selected events (those not applied yet)")
    def reprocess(self, request, queryset):
        counts = inbound_events_reprocess(event_pks=list(queryset.values_list("pk", flat=True)))
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "nothing to do"
        self.message_user(request, f"Re-processed: {summary}.")


@admin.register(InboundDelivery)
class InboundDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "event_id", "event_type", "outcome", "signature_valid", "remote_ip", "body_size")
    list_filter = ("outcome", "signature_valid")
    search_fields = ("event_id", "remote_ip")
    date_hierarchy = "received_at"


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("url", "owner", "is_active", "disabled_reason", "created_at")
    list_filter = ("is_active",)
    search_fields = ("url", "owner__email", "description")
    list_select_related = ("owner",)
    # Never the secrets: they sign deliveries and were shown to the owner once.
    fields = (
        "owner",
        "url",
        "events",
        "description",
        "is_active",
        "disabled_reason",
        "disabled_at",
        "previous_secret_expires_at",
        "created_at",
        "updated_at",
    )
    readonly_fields = (
        "owner",
        "url",
        "events",
        "previous_secret_expires_at",
        "disabled_at",
        "created_at",
        "updated_at",
    )

    def has_add_permission(self, request):
        return False  # subscriptions (and their secrets) are issued through the API


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    fields = (
        "number",
        "status",
        "status_code",
        "duration_ms",
        "error",
        "response_excerpt",
        "started_at",
        "finished_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "message_id",
        "event_type",
        "subscription",
        "status",
        "attempt_count",
        "last_status_code",
        "created_at",
    )
    list_filter = ("status", fixed_values_filter("event__type", EVENT_TYPES, "event type"))
    search_fields = ("message_id__startswith",)
    search_help_text = "Deliveries whose message id starts with the text."
    list_select_related = ("event", "subscription")
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    inlines = [WebhookAttemptInline]
    actions = ["replay"]

    @admin.display(description="event")
    def event_type(self, delivery: WebhookDelivery) -> str:
        return delivery.event.type

    @admin.action(description="Replay selected deliveries now")
    def replay(self, request, queryset):
        queued = sum(webhook_delivery_replay(delivery_id=pk) for pk in queryset.values_list("pk", flat=True))
        self.message_user(request, f"Queued {queued} deliveries again.")


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ("type", "owner", "created_at")
    list_filter = ("type",)
    search_fields = ("owner__email",)
    list_select_related = ("owner",)
