"""Staff views of the marketplace. Nothing here shows a signing secret or a client secret; state
changes go through the same services as the API. The rows are read-only; each action needs a named Django
permission (`allowed_permissions`), and a party to a task never decides its money: refunds and dispute
resolutions refuse the task's poster and the winning agent's owner (docs/decisions.md#staff-permissions)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.admin import BoundedCountPaginator, fixed_values_filter
from core.http.errors import DomainError
from payments.admin import NeverDeleted
from tasks_market.models import (
    Agent,
    BenchmarkRun,
    Bid,
    Delivery,
    DeliveryAttempt,
    DeliverySubmission,
    DisputeOutcome,
    DisputeResolution,
    Review,
    SavedSearch,
    SearchMatch,
    SearchMatchAttempt,
    Task,
    TaskStatus,
)
from tasks_market.models.market import CURRENCIES
from tasks_market.selectors import is_party, selected_payment
from tasks_market.services import agents as agent_services
from tasks_market.services import deliveries as delivery_services
from tasks_market.services import disputes as dispute_services
from tasks_market.services import posting as task_services
from tasks_market.services import reputation as reputation_services
from tasks_market.services.errors import InvalidField


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class NeverDeletedAdmin(NeverDeleted, ReadOnlyAdmin):
    """Money rows and the rows they hang off (tasks, bids, deliveries) are never deleted
    (docs/decisions.md#money-rows-are-never-deleted)."""


def _needs(permission: str):
    """A `has_<name>_permission` for an action's `allowed_permissions = ("<name>",)`: the user holds the Django
    permission. The rows stay read-only whatever the user holds; "change" here is the right to act on them."""

    def has_permission(self, request) -> bool:
        return request.user.has_perm(permission)

    return has_permission


def _starts_with_help(subject: str, vendor: str | None = None) -> str:
    """The help for a `__startswith` search (LIKE 'text%', which an index serves): PostgreSQL compares the
    case; SQLite's LIKE (the local profile's database) ignores it for the letters A-Z."""
    case = "ignoring the case of A-Z" if (vendor or connection.vendor) == "sqlite" else "case-sensitive"
    return f"{subject} starts with the text ({case})."


def _run_each(modeladmin, request, queryset, action, verb: str) -> None:
    done = 0
    for obj in queryset:
        try:
            action(obj)
            done += 1
        except DomainError as exc:
            modeladmin.message_user(request, f"{obj}: {exc.message}", level=messages.WARNING)
    modeladmin.message_user(request, f"{verb} {done} of {queryset.count()}.")


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    list_display = ("name", "owner", "endpoint_url", "benchmark_score", "benchmarked_at", "created_at")
    # Neither filter lists values from the table: a date range, and whether a benchmark ever completed.
    list_filter = ("created_at", ("benchmark_score", admin.EmptyFieldListFilter))
    search_fields = ("name", "owner__email", "endpoint_url")
    list_select_related = ("owner",)
    # Never the secrets: only when they were rotated.
    fields = (
        "name",
        "owner",
        "description",
        "endpoint_url",
        "capabilities",
        "benchmark_score",
        "benchmarked_at",
        "secret_rotated_at",
        "previous_secret_expires_at",
        "created_at",
        "updated_at",
    )
    actions = ["run_benchmark"]
    has_benchmark_permission = _needs("tasks_market.add_benchmarkrun")

    @admin.action(description="Run a benchmark of the selected agents", permissions=["benchmark"])
    def run_benchmark(self, request, queryset):
        _run_each(
            self, request, queryset, lambda a: agent_services.benchmark_start(owner=a.owner, agent_id=a.id), "Queued"
        )


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(ReadOnlyAdmin):
    list_display = ("agent", "status", "score", "cases_passed", "cases_total", "avg_latency_ms", "created_at")
    list_filter = ("status",)
    search_fields = ("agent__name", "agent__owner__email")
    list_select_related = ("agent",)


class BidInline(admin.TabularInline):
    model = Bid
    fields = ("agent", "amount", "currency", "eta_hours", "status", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Task)
class TaskAdmin(NeverDeletedAdmin):
    list_display = ("title", "poster", "status", "budget_amount", "budget_currency", "deadline", "created_at")
    list_filter = ("status", "category", fixed_values_filter("budget_currency", CURRENCIES))
    search_fields = ("title__startswith",)  # the title_prefix index
    search_help_text = _starts_with_help("Tasks whose title")
    list_select_related = ("poster",)
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    inlines = [BidInline]
    actions = ["cancel"]
    has_cancel_permission = _needs("tasks_market.change_task")

    @admin.action(description="Cancel the selected tasks (open or awaiting payment)", permissions=["cancel"])
    def cancel(self, request, queryset):
        _run_each(self, request, queryset, lambda t: task_services.task_cancel(task_id=t.id), "Cancelled")


@admin.register(Bid)
class BidAdmin(NeverDeletedAdmin):
    list_display = ("task", "agent", "bidder", "amount", "currency", "eta_hours", "status", "judge_score")
    list_filter = ("status",)
    search_fields = ("bidder__email__startswith",)
    search_help_text = "Bids by bidders whose e-mail starts with the text."
    list_select_related = ("task", "agent", "bidder", "judgement")
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    readonly_fields = ("judge_score", "judge_criteria")

    @admin.display(description="Judge score")
    def judge_score(self, bid: Bid):
        judgement = getattr(bid, "judgement", None)
        return judgement.score if judgement else None

    @admin.display(description="Judge criteria")
    def judge_criteria(self, bid: Bid):
        judgement = getattr(bid, "judgement", None)
        if not judgement:
            return "-"
        return "; ".join(f"{c['name']}: {c['score']} ({c['detail']})" for c in judgement.criteria) or "pending"


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    fields = ("number", "round", "status", "status_code", "duration_ms", "error", "started_at", "finished_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class DeliverySubmissionInline(admin.TabularInline):
    model = DeliverySubmission
    fields = ("number", "notes", "feedback", "submitted_by", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Delivery)
class DeliveryAdmin(NeverDeletedAdmin):
    list_display = ("task", "agent", "status", "revision_count", "attempt_count", "dispatched_at", "updated_at")
    list_filter = ("status",)
    search_fields = ("task__title__startswith",)
    search_help_text = _starts_with_help("Deliveries of tasks whose title")
    list_select_related = ("task", "agent")
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    inlines = [DeliverySubmissionInline, DeliveryAttemptInline]
    actions = ["retry", "resolve"]
    has_resolve_permission = _needs("tasks_market.add_disputeresolution")
    has_retry_permission = _needs("tasks_market.change_delivery")

    @admin.action(
        description="Resolve the dispute (one disputed delivery): refund, release or split", permissions=["resolve"]
    )
    def resolve(self, request, queryset):
        disputed = list(queryset.filter(task__status=TaskStatus.DISPUTED).select_related("task")[:2])
        if len(disputed) != 1:
            self.message_user(request, "Select exactly one delivery of a disputed task.", level=messages.WARNING)
            return None
        if is_party(request.user, disputed[0].task):
            raise PermissionDenied(dispute_services.PARTY_REFUSED)
        return HttpResponseRedirect(reverse("admin:tasks_market_disputeresolution_resolve", args=[disputed[0].task_id]))

    @admin.action(
        description="Retry the dispatch of the selected deliveries (pending, failed or stuck)", permissions=["retry"]
    )
    def retry(self, request, queryset):
        _run_each(
            self, request, queryset, lambda d: delivery_services.delivery_retry(task_id=d.task_id), "Queued retries of"
        )


class DisputeResolveForm(forms.Form):
    """Staff's resolve form: the outcome, the amount refunded for a split, a note."""

    outcome = forms.ChoiceField(choices=DisputeOutcome.choices, widget=forms.RadioSelect)
    refund_amount = forms.DecimalField(max_digits=12, decimal_places=2, min_value=0, required=False)
    note = forms.CharField(widget=forms.Textarea, max_length=5000)

    def clean(self):
        data = super().clean()
        if data.get("outcome") == DisputeOutcome.SPLIT and not data.get("refund_amount"):
            self.add_error("refund_amount", "A split needs the amount refunded to the poster.")
        return data


@admin.register(DisputeResolution)
class DisputeResolutionAdmin(NeverDeletedAdmin):
    """Disputes resolved with money (docs/payouts.md#disputes). Staff resolve one from the Delivery list
    ("Resolve the dispute"), which opens the resolve form; the service applies it once, with no admin
    transaction around its provider calls. "Finish applying" continues one a provider failure interrupted."""

    list_display = (
        "task",
        "outcome",
        "refund_amount",
        "release_amount",
        "currency",
        "status",
        "resolved_by",
        "created_at",
    )
    list_filter = ("outcome", "status", "currency")
    search_fields = ("task__title", "task__poster__email", "note", "reason")
    list_select_related = ("task", "resolved_by")
    actions = ["finish"]
    has_resolve_permission = _needs("tasks_market.add_disputeresolution")

    def get_urls(self):
        own = [
            path(
                "resolve/<uuid:task_id>/",
                self.admin_site.admin_view(self.resolve_view),
                name="tasks_market_disputeresolution_resolve",
            )
        ]
        return own + super().get_urls()

    def resolve_view(self, request, task_id):
        """Not wrapped in a transaction (unlike the admin's change form): the service holds no lock
        across the provider's refund."""
        if not self.has_resolve_permission(request):
            raise PermissionDenied
        task = Task.objects.filter(pk=task_id).select_related("delivery").first()
        if task is None:
            raise Http404
        if is_party(request.user, task):
            raise PermissionDenied(dispute_services.PARTY_REFUSED)
        form = DisputeResolveForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                resolved = dispute_services.dispute_resolve(
                    task_id=task.pk,
                    outcome=data["outcome"],
                    refund_amount=data.get("refund_amount"),
                    note=data["note"],
                    staff_user=request.user,
                )
            except (DomainError, InvalidField) as exc:
                form.add_error(None, getattr(exc, "message", str(exc)))
            else:
                self.message_user(request, f"Resolved: {resolved.resolution.get_outcome_display()}.")
                return HttpResponseRedirect(reverse("admin:tasks_market_disputeresolution_changelist"))
        payment = selected_payment(task)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Resolve the dispute of {task.title}",
            "task": task,
            "payment": payment,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/tasks_market/resolve_dispute.html", context)

    @admin.action(description="Finish applying the selected resolutions", permissions=["resolve"])
    def finish(self, request, queryset):
        _run_each(
            self,
            request,
            queryset,
            lambda r: dispute_services.dispute_resolve(
                task_id=r.task_id,
                outcome=r.outcome,
                refund_amount=r.refund_amount or None,
                note=r.note,
                staff_user=request.user,  # only for the party check: the resolution keeps who decided it
            ),
            "Applied",
        )


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    """The posters' reviews (docs/decisions.md#reviews). Staff may hide a comment (its rating still counts
    toward the agent's score) and show it again; nothing else is changed here."""

    list_display = ("task", "agent", "poster", "rating", "comment_hidden", "replied_at", "created_at")
    list_filter = (fixed_values_filter("rating", ("1", "2", "3", "4", "5")), "comment_hidden", "created_at")
    search_fields = ("poster__email__startswith",)
    search_help_text = "Reviews by posters whose e-mail starts with the text."
    list_select_related = ("task", "agent", "poster")
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    fields = (
        "task",
        "agent",
        "poster",
        "rating",
        "comment",
        "comment_hidden",
        "weight",
        "editable_until",
        "reply",
        "replied_at",
        "created_at",
        "updated_at",
    )
    actions = ["hide_comment", "show_comment"]
    has_moderate_permission = _needs("tasks_market.change_review")

    @admin.action(
        description="Hide the comment of the selected reviews (the rating still counts)", permissions=["moderate"]
    )
    def hide_comment(self, request, queryset):
        _run_each(
            self, request, queryset, lambda r: reputation_services.review_set_hidden(review_id=r.pk, hidden=True), "Hid"
        )

    @admin.action(description="Show the comment of the selected reviews again", permissions=["moderate"])
    def show_comment(self, request, queryset):
        _run_each(
            self,
            request,
            queryset,
            lambda r: reputation_services.review_set_hidden(review_id=r.pk, hidden=False),
            "Showed",
        )


@admin.register(SavedSearch)
class SavedSearchAdmin(ReadOnlyAdmin):
    """Agents' saved searches (docs/decisions.md#saved-searches); their owners manage them over the API."""

    list_display = ("agent", "categories", "currency", "min_budget", "max_budget", "q", "created_at")
    list_filter = ("created_at",)
    search_fields = ("agent__name", "agent__owner__email", "q")
    list_select_related = ("agent",)


class SearchMatchAttemptInline(admin.TabularInline):
    model = SearchMatchAttempt
    extra = 0
    can_delete = False
    fields = ("number", "status", "status_code", "duration_ms", "error", "started_at", "finished_at")
    readonly_fields = fields


@admin.register(SearchMatch)
class SearchMatchAdmin(ReadOnlyAdmin):
    """The `task.matched` announcements, one per task and agent, with their attempts."""

    list_display = ("task", "agent", "status", "attempt_count", "next_attempt_at", "sent_at", "created_at")
    list_filter = ("status", "created_at")
    search_fields = ("agent__name", "task__title")
    list_select_related = ("task", "agent")
    inlines = [SearchMatchAttemptInline]
