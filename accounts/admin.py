import unicodedata

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.addresses import normalise_email
from accounts.models import ApiKey, User
from accounts.verification import email_verified_mark
from core.admin import BoundedCountPaginator


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ("-date_joined",)
    list_display = ("email", "email_verified_at", "is_staff", "is_active", "date_joined")
    list_filter = ("is_staff", "is_active", "is_superuser")
    search_fields = ("email_key__startswith",)  # the address's key (accounts.addresses): the text is normalised too
    search_help_text = "Users whose e-mail starts with the text (in any case)."
    paginator = BoundedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False
    readonly_fields = ("date_joined", "last_login", "password_reset_at", "email_verified_at")
    actions = ["mark_email_verified"]
    fieldsets = (
        (None, {"fields": ("email", "email_verified_at", "password")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined", "password_reset_at")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    def get_search_results(self, request, queryset, search_term):
        # Searched as the key is spelt: the local part casefolded, a domain (or its start) in IDNA 2008 A-labels.
        term = search_term.strip()
        term = normalise_email(term) if "@" in term else unicodedata.normalize("NFKC", term).casefold()
        return super().get_search_results(request, queryset, term)

    @admin.action(description="Mark the e-mail address verified (it was proven another way)", permissions=["change"])
    def mark_email_verified(self, request, queryset):
        marked = sum(email_verified_mark(user=user) for user in queryset.filter(email_verified_at__isnull=True))
        self.message_user(request, f"Marked {marked} address(es) verified.")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are issued through the API or `manage.py create_api_key`; here they are seen and revoked."""

    list_display = ("name", "prefix", "user", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "prefix", "user__email")
    list_select_related = ("user",)
    fields = ("name", "prefix", "user", "created_at", "last_used_at", "revoked_at")  # never the hash
    readonly_fields = ("name", "prefix", "user", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        from django.utils import timezone

        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} key(s).")
