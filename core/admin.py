from django.contrib import admin

from core.models import RateLimitOverride
from core.ratelimit import forget_overrides


@admin.register(RateLimitOverride)
class RateLimitOverrideAdmin(admin.ModelAdmin):
    list_display = ("network", "rule", "limit", "reason", "updated_at")
    list_filter = ("rule",)
    search_fields = ("network", "reason")

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        forget_overrides()
