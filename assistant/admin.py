from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count

from accounts.admin import UserAdmin
from accounts.models import User
from assistant.models import Assistant, AssistantMessage, CreditBalance, CreditTransaction, ImageGeneration
from assistant.selectors import credit_balance
from assistant.services import credits_adjust, image_generation_fail
from core.http.errors import InsufficientCredits


class CreditBalanceInline(admin.StackedInline):
    """The user's credits on their admin page; they change through a ledger adjustment (Credit transactions,
    Add), never by editing the number."""

    model = CreditBalance
    fields = readonly_fields = ("credits",)
    can_delete = False
    verbose_name_plural = "Credits"

    def has_add_permission(self, request, obj=None):
        return False


# The user admin is `accounts`'; the credits are this app's, so it adds them to that page (accounts imports no
# app above it: docs/architecture.md#account-extensions).
admin.site.unregister(User)


@admin.register(User)
class UserWithCreditsAdmin(UserAdmin):
    inlines = (*UserAdmin.inlines, CreditBalanceInline)
    list_display = (*UserAdmin.list_display[:-1], "credits", UserAdmin.list_display[-1])
    list_select_related = ("credit_balance",)

    @admin.display(description="credits", ordering="credit_balance__credits")
    def credits(self, user: User) -> int:
        balance = getattr(user, "credit_balance", None)
        return balance.credits if balance is not None else 0


class AssistantMessageInline(admin.TabularInline):
    model = AssistantMessage
    fields = ("created_at", "role", "message_type", "content", "model")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-created_at",)
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Assistant)
class AssistantAdmin(admin.ModelAdmin):
    """Conversations: one assistant per user. Deleting one deletes its history, as DELETE /assistant/me does."""

    list_display = ("user", "created_at", "message_count")
    # One row per user: a date range and the user's active flag, neither listing values from the table.
    list_filter = ("created_at", "user__is_active")
    search_fields = ("user__email",)
    list_select_related = ("user",)
    readonly_fields = ("user", "created_at")
    inlines = [AssistantMessageInline]

    def has_add_permission(self, request):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_message_count=Count("messages"))

    @admin.display(description="messages", ordering="_message_count")
    def message_count(self, obj):
        return obj._message_count


@admin.register(AssistantMessage)
class AssistantMessageAdmin(admin.ModelAdmin):
    list_display = ("created_at", "user_email", "role", "message_type", "short_content", "model")
    list_filter = ("role", "message_type", "created_at")
    search_fields = ("content", "assistant__user__email")
    list_select_related = ("assistant__user",)
    readonly_fields = ("assistant", "role", "message_type", "content", "attachments", "model", "created_at")
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="user", ordering="assistant__user__email")
    def user_email(self, obj):
        return obj.assistant.user.email

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:80]


@admin.register(ImageGeneration)
class ImageGenerationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "user", "model", "status", "credit_cost", "short_prompt")
    list_filter = ("status", "model", "created_at")
    search_fields = ("prompt", "user__email", "=conversation_id", "=id")
    list_select_related = ("user",)
    readonly_fields = (
        "id",
        "user",
        "conversation_id",
        "model",
        "prompt",
        "status",
        "credit_cost",
        "storage_name",
        "error",
        "created_at",
        "completed_at",
    )
    date_hierarchy = "created_at"
    actions = ["fail_and_refund"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="prompt")
    def short_prompt(self, obj):
        return obj.prompt[:80]

    @admin.action(description="Fail selected pending generations and refund their credits")
    def fail_and_refund(self, request, queryset):
        refunded = sum(
            image_generation_fail(generation_id=g.pk, error=f"Failed by {request.user.email} in the admin.")
            for g in queryset.filter(status=ImageGeneration.Status.PENDING)
        )
        self.message_user(request, f"Refunded {refunded} generation(s).")


class CreditAdjustmentForm(forms.ModelForm):
    """Adding a ledger row in the admin is an adjustment: it goes through `credits_adjust`."""

    user = forms.ModelChoiceField(queryset=User.objects.order_by("email"))
    delta = forms.IntegerField(help_text="Credits to add (positive) or take back (negative).")
    reason = forms.CharField(max_length=500, help_text="Why, for the record.")

    class Meta:
        model = CreditTransaction
        fields = ("user", "delta", "reason")

    def clean_delta(self):
        delta = self.cleaned_data["delta"]
        if delta == 0:
            raise forms.ValidationError("An adjustment changes the balance: use a non-zero number.")
        return delta

    def clean(self):
        cleaned = super().clean()
        user, delta = cleaned.get("user"), cleaned.get("delta")
        balance = credit_balance(user=user) if user is not None else 0
        if user is not None and delta is not None and balance + delta < 0:
            raise forms.ValidationError(f"{user.email} has {balance} credits; the balance cannot go below 0.")
        return cleaned


@admin.register(CreditTransaction)
class CreditTransactionAdmin(admin.ModelAdmin):
    """The credit ledger. "Add" records an adjustment (with its reason) through the service; rows never change."""

    list_display = ("created_at", "user", "delta", "balance_after", "kind", "reason", "reference", "actor")
    list_filter = ("kind", "created_at")
    search_fields = ("user__email", "reason", "=reference")
    list_select_related = ("user", "actor")
    date_hierarchy = "created_at"

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = CreditAdjustmentForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("user", "delta", "reason")
        return ("user", "delta", "balance_after", "kind", "reason", "reference", "actor", "created_at")

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        try:
            recorded = credits_adjust(
                user=form.cleaned_data["user"],
                delta=form.cleaned_data["delta"],
                reason=form.cleaned_data["reason"],
                actor=request.user,
            )
        except InsufficientCredits:
            # The balance fell between the form check and the update (a generation ran meanwhile).
            self.message_user(request, "Not enough credits any more; nothing was changed.", messages.ERROR)
            raise
        # The admin goes on to log and redirect to this object: make it the row the service wrote.
        obj.pk = recorded.pk
        obj.__dict__.update({k: v for k, v in recorded.__dict__.items() if k != "_state"})
        obj._state.adding = False
