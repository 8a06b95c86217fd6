"""Staff views of sellers' money (docs/payouts.md#admin): payout accounts, earnings, payouts, and the
ledger, per task (`?source=task:<uuid>`) and per owner (`?owner_id=<id>`). Read-only: money moves
through the services, never by editing a row."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from payments.models import Earning, LedgerEntry, LedgerLine, Payout, PayoutAccount


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _ledger_link(label: str, **query) -> str:
    url = reverse("admin:payments_ledgerline_changelist")
    ((name, value),) = query.items()
    return format_html('<a href="{}?{}={}">{}</a>', url, name, value, label)


@admin.register(PayoutAccount)
class PayoutAccountAdmin(ReadOnlyAdmin):
    list_display = (
        "owner",
        "provider",
        "provider_account_id",
        "status",
        "payouts_enabled",
        "display_name",
        "updated_at",
    )
    list_filter = ("status", "payouts_enabled", "provider")
    search_fields = ("owner__email", "provider_account_id", "display_name")
    list_select_related = ("owner",)


@admin.register(Earning)
class EarningAdmin(ReadOnlyAdmin):
    list_display = (
        "source",
        "owner",
        "gross",
        "fee",
        "amount",
        "currency",
        "status",
        "chargeback_state",
        "created_at",
        "ledger",
    )
    list_filter = ("status", "chargeback_state", "currency", "provider")
    search_fields = ("source", "payment_ref", "owner__email", "transfer_id", "chargeback_id")
    list_select_related = ("owner",)
    date_hierarchy = "created_at"

    @admin.display(description="Ledger")
    def ledger(self, earning: Earning) -> str:
        return _ledger_link("task", source=earning.source) + " " + _ledger_link("owner", owner_id=earning.owner_id)


@admin.register(Payout)
class PayoutAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "amount", "currency", "status", "provider_payout_id", "created_at", "paid_at")
    list_filter = ("status", "currency")
    search_fields = ("owner__email", "provider_payout_id", "idempotency_key")
    list_select_related = ("owner", "account")


class LedgerLineInline(admin.TabularInline):
    model = LedgerLine
    fields = ("account", "currency", "amount")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "source", "key", "created_at")
    list_filter = ("kind",)
    search_fields = ("source", "key")
    inlines = [LedgerLineInline]


@admin.register(LedgerLine)
class LedgerLineAdmin(ReadOnlyAdmin):
    """The ledger view: filter by `?source=task:<uuid>` (one task) or `?owner_id=<id>` (one seller)."""

    list_display = ("entry_id", "kind", "source", "account", "amount", "currency", "created_at")
    list_filter = ("currency", "entry__kind")
    search_fields = ("source", "account", "owner_id")
    list_select_related = ("entry",)
    ordering = ("entry_id", "id")

    @admin.display(description="Kind")
    def kind(self, line: LedgerLine) -> str:
        return line.entry.kind

    @admin.display(description="At")
    def created_at(self, line: LedgerLine):
        return line.entry.created_at

    def lookup_allowed(self, lookup, value, request=None):
        return lookup in ("source", "owner_id", "account") or super().lookup_allowed(lookup, value, request)
