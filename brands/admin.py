from __future__ import annotations

from django.contrib import admin
from django.db import models

from brands.models import (
    Advertiser,
    Artifact,
    Brand,
    BrandCompetitor,
    BrandKit,
    CompetitorSeed,
    ConnectedAccount,
    LocalPublishedPost,
    Publication,
    ResearchItem,
    TrackedGroup,
    TrackedGroupFork,
    TrackedGroupMember,
)
from brands.models.publications import ACTIVE_STATUSES
from brands.services.publications import publication_cancel

# Django 6 makes https the default scheme of URL form fields; say so now.
URL_FIELDS = {models.URLField: {"assume_scheme": "https"}}


class ResearchItemInline(admin.TabularInline):
    model = ResearchItem
    extra = 0
    fields = ("module", "status", "error_message", "queued_at", "started_at", "finished_at", "updated_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    list_display = ("name", "domain", "industry", "country", "owner", "created_at")
    list_filter = ("country", "industry", "created_at")
    search_fields = ("name", "domain", "website_url", "owner__email")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    readonly_fields = ("created_at", "updated_at")
    formfield_overrides = URL_FIELDS
    inlines = [ResearchItemInline]


@admin.register(BrandKit)
class BrandKitAdmin(admin.ModelAdmin):
    list_display = ("name", "brand", "owner", "team", "linked_at", "created_at")
    list_filter = (("team", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("name", "brand__name", "owner__email", "tagline")
    list_select_related = ("brand", "owner", "team")
    raw_id_fields = ("owner", "brand", "team")
    readonly_fields = ("linked_at", "created_at", "updated_at")
    formfield_overrides = URL_FIELDS


@admin.register(ResearchItem)
class ResearchItemAdmin(admin.ModelAdmin):
    list_display = ("brand", "module", "status", "updated_at")
    list_filter = ("module", "status")
    search_fields = ("brand__name", "error_message")
    list_select_related = ("brand",)
    readonly_fields = [f.name for f in ResearchItem._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(CompetitorSeed)
class CompetitorSeedAdmin(admin.ModelAdmin):
    """The seed layer: public seeds (no owner) are shared by every brand with the target domain."""

    list_display = ("name", "target_domain", "origin", "owner", "canonical_domain", "industry", "updated_at")
    list_filter = ("origin", "industry", "country")
    search_fields = ("name", "name_key", "target_domain", "canonical_domain", "owner__email")
    list_select_related = ("owner",)
    raw_id_fields = ("owner", "advertiser")
    readonly_fields = ("name_key", "created_at", "updated_at")


@admin.register(BrandCompetitor)
class BrandCompetitorAdmin(admin.ModelAdmin):
    """Brands' copies of seeds (their differences) and manual rows (no seed)."""

    list_display = ("name", "brand", "seed", "is_starred", "removed", "added", "updated_at")
    list_filter = ("is_starred", "removed", "added", ("seed", admin.EmptyFieldListFilter))
    search_fields = ("name", "brand__name", "seed__name", "canonical_domain")
    list_select_related = ("brand", "seed")
    raw_id_fields = ("brand", "seed", "advertiser")
    readonly_fields = ("created_at", "updated_at", "removed_at")


@admin.register(Advertiser)
class AdvertiserAdmin(admin.ModelAdmin):
    list_display = ("name", "domain", "industry", "created_at")
    list_filter = ("industry",)
    search_fields = ("name", "domain")


class TrackedGroupMemberInline(admin.TabularInline):
    model = TrackedGroupMember
    extra = 0
    raw_id_fields = ("advertiser",)
    fields = ("advertiser", "display_name", "module", "added_at")
    readonly_fields = ("added_at",)


class TrackedGroupForkInline(admin.TabularInline):
    model = TrackedGroupFork
    extra = 0
    readonly_fields = ("forked_at",)


@admin.register(TrackedGroup)
class TrackedGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "brand", "system_slug", "shared_modules", "updated_at")
    list_filter = ("system_slug", "created_at")
    search_fields = ("name", "brand__name", "system_slug")
    list_select_related = ("brand",)
    raw_id_fields = ("brand",)
    readonly_fields = ("created_at", "updated_at")
    inlines = [TrackedGroupMemberInline, TrackedGroupForkInline]


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("title", "brand", "module", "kind", "created_at")
    list_filter = ("module", "kind", "created_at")
    search_fields = ("title", "summary", "brand__name")
    list_select_related = ("brand",)
    raw_id_fields = ("brand",)
    readonly_fields = ("created_at",)


@admin.register(Publication)
class PublicationAdmin(admin.ModelAdmin):
    list_display = ("id", "brand", "action", "platform", "status", "phase", "error_code", "created_at")
    list_filter = ("status", "platform", "action", "phase", "error_code")
    search_fields = ("id", "creative_id", "destination_id", "destination_label", "remote_id", "brand__name")
    list_select_related = ("brand",)
    raw_id_fields = ("brand",)
    readonly_fields = [f.name for f in Publication._meta.fields]
    actions = ["cancel"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Cancel selected preflight / queued publications")
    def cancel(self, request, queryset):
        cancelled = 0
        for publication in queryset.filter(status__in=ACTIVE_STATUSES[:2]).select_related("brand__owner"):
            try:
                publication_cancel(owner=publication.brand.owner, publication_id=publication.id)
                cancelled += 1
            except Exception as exc:  # lost a race with the publisher: report, keep going
                self.message_user(request, f"{publication.id}: {exc}", level="warning")
        self.message_user(request, f"Cancelled {cancelled} publication(s).")


@admin.register(LocalPublishedPost)
class LocalPublishedPostAdmin(admin.ModelAdmin):
    """What the local publishing provider published."""

    list_display = ("remote_id", "platform", "action", "destination_id", "created_at")
    list_filter = ("platform", "action")
    search_fields = ("remote_id", "destination_id", "publication__id")
    readonly_fields = [f.name for f in LocalPublishedPost._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(ConnectedAccount)
class ConnectedAccountAdmin(admin.ModelAdmin):
    """Connected social accounts: health, never the tokens (docs/decisions.md#connected-accounts)."""

    list_display = ("account_name", "account_id", "platform", "brand", "health", "token_expires_at", "last_checked_at")
    list_filter = ("platform", "health", ("token_expires_at", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("account_id", "account_name", "brand__name")
    list_select_related = ("brand",)
    raw_id_fields = ("brand",)
    exclude = ("access_token_encrypted", "refresh_token_encrypted")
    readonly_fields = [
        f.name
        for f in ConnectedAccount._meta.fields
        if f.name not in ("access_token_encrypted", "refresh_token_encrypted")
    ]

    def has_add_permission(self, request):
        return False  # connected through the platform's OAuth flow, which issues the tokens
