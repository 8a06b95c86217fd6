"""Staff views of money (docs/payouts.md#admin): buyers' payments, payout accounts, earnings, payouts, card
chargebacks, and the ledger, per task (`?source=task:<uuid>`) and per owner (`?owner_id=<id>`). Read-only: money moves
through the services, never by editing a row; a payment's refund is its source's decision (payments.registry)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery
from django.urls import reverse
from django.utils.html import format_html

from core.admin import BoundedCountPaginator, fixed_values_filter
from core.http.errors import DomainError
from payments.models import Chargeback, Earning, LedgerEntry, LedgerLine, Payment, Payout, PayoutAccount
from payments.registry import payment_source


class NeverDeleted:
    """A ModelAdmin mixin: money rows (and the rows they hang off) are never deleted, whatever permission
    staff hold: no delete page, no "delete selected" (docs/decisions.md#money-rows-are-never-deleted); the
    database refuses it too."""

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


class ReadOnlyAdmin(NeverDeleted, admin.ModelAdmin):
    """Read-only: money moves through the services, never by editing a row."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class AmountMismatchFilter(admin.SimpleListFilter):
    """Payments for which the provider reported a success with another amount or currency (refused)."""

    title = "amount mismatch"
    parameter_name = "mismatch"

    def lookups(self, request, model_admin):
        return [("yes", "Refused success event"), ("no", "None")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.exclude(mismatch_reason="")
        if self.value() == "no":
            return queryset.filter(mismatch_reason="")
        return queryset


@admin.register(Payment)
class PaymentAdmin(ReadOnlyAdmin):
    list_display = (
        "provider_payment_id",
        "provider",
        "source",
        "amount",
        "currency",
        "status",
        "mismatch_reason",
        "created_at",
    )
    list_filter = (
        "status",
        AmountMismatchFilter,
        ("refund_due_at", admin.EmptyFieldListFilter),
        fixed_values_filter("provider", ("local", "stripe")),
    )
    search_fields = ("provider_payment_id__startswith",)
    search_help_text = "Payments whose provider id starts with the text."
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    # Not the client secret: it lets whoever holds it pay, and staff do not need it.
    fields = (
        "provider",
        "provider_payment_id",
        "source",
        "reference",
        "payer",
        "payee",
        "amount",
        "currency",
        "status",
        "created_at",
        "succeeded_at",
        "released_at",
        "mismatch_reason",
        "mismatch_event_id",
        "mismatch_at",
        "refund_due_at",
    )
    actions = ["refund"]

    def has_refund_permission(self, request) -> bool:
        """The rows stay read-only; "change" is the right to act on them (docs/decisions.md#staff-permissions)."""
        return request.user.has_perm("payments.change_payment")

    @admin.action(
        description="Refund the selected payments (disputed tasks: resolves the dispute as a full refund; "
        "released: reverses the seller's share)",
        permissions=["refund"],
    )
    def refund(self, request, queryset):
        done = 0
        for payment in queryset:
            try:
                payment_source(payment.source).staff_refund(payment, request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{payment}: {exc.message}", level=messages.WARNING)
        self.message_user(request, f"Refunded {done} of {queryset.count()}.")


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


@admin.register(Chargeback)
class ChargebackAdmin(ReadOnlyAdmin):
    """Card chargebacks as the provider announced them (docs/payouts.md#chargebacks), with the earning of
    the disputed payment. A chargeback names the payment, not a row of ours (it may come before the
    release), so the earning is annotated by one subquery rather than joined."""

    list_display = ("id", "payment_ref", "status", "earning_source", "earning_owner", "earning_state", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "payment_ref")
    list_select_related = False  # no foreign keys: the earning comes from the annotations below
    readonly_fields = (
        "id",
        "payment_ref",
        "status",
        "earning_source",
        "earning_owner",
        "earning_state",
        "created_at",
        "updated_at",
    )
    fields = readonly_fields
    date_hierarchy = "created_at"

    def get_queryset(self, request) -> QuerySet[Chargeback]:
        earning = Earning.objects.filter(payment_ref=OuterRef("payment_ref")).order_by("created_at")
        return (
            super()
            .get_queryset(request)
            .annotate(
                _earning_source=Subquery(earning.values("source")[:1]),
                _earning_owner=Subquery(earning.values("owner__email")[:1]),
                _earning_state=Subquery(earning.values("chargeback_state")[:1]),
            )
        )

    @admin.display(description="Earning", ordering="_earning_source")
    def earning_source(self, chargeback: Chargeback) -> str:
        source = getattr(chargeback, "_earning_source", None)
        if not source:
            return "(nothing released yet)"
        url = reverse("admin:payments_earning_changelist")
        return format_html('<a href="{}?q={}">{}</a> {}', url, source, source, _ledger_link("ledger", source=source))

    @admin.display(description="Seller")
    def earning_owner(self, chargeback: Chargeback) -> str:
        return getattr(chargeback, "_earning_owner", None) or "-"

    @admin.display(description="Earning's chargeback state")
    def earning_state(self, chargeback: Chargeback) -> str:
        return getattr(chargeback, "_earning_state", None) or "-"


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
