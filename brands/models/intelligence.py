"""Brand intelligence: advertisers, tracked groups of them per module, and history artifacts."""

from __future__ import annotations

import uuid

from django.db import models

from brands.models.brand import Brand, ResearchModule


class Advertiser(models.Model):
    """An advertiser as the ad libraries know it. Shared by everyone; found or created by domain.

    Shared identity only: `name` comes from system sources (competitor seeds, the admin) or is the
    domain itself. What a user types for an advertiser is that user's display name and lives on
    their membership row (TrackedGroupMember.display_name), so it never changes what others see.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    domain = models.CharField(max_length=253, unique=True, help_text="Lower-case host without www.")
    industry = models.CharField(max_length=120, blank=True)
    avatar_url = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "domain"]

    def __str__(self) -> str:
        return f"{self.name} ({self.domain})"


class TrackedGroup(models.Model):
    """A brand's named group of advertisers, shared with the modules in `shared_modules`.

    Membership rows with `module == ""` are the shared membership; a module removed from
    `shared_modules` gets a fork (TrackedGroupFork) and its own rows with `module` set.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="tracked_groups")
    name = models.CharField(max_length=200)
    system_slug = models.CharField(
        max_length=50, blank=True, help_text="Set on groups the system keeps (e.g. 'competitors')."
    )
    shared_modules = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["brand", "-created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "system_slug"], condition=~models.Q(system_slug=""), name="unique_system_group"
            )
        ]

    def __str__(self) -> str:
        return self.name


SHARED = ""  # TrackedGroupMember.module of the shared membership


class TrackedGroupMember(models.Model):
    group = models.ForeignKey(TrackedGroup, on_delete=models.CASCADE, related_name="memberships")
    advertiser = models.ForeignKey(Advertiser, on_delete=models.CASCADE, related_name="memberships")
    module = models.CharField(
        max_length=30, blank=True, default=SHARED, choices=[("", "shared"), *ResearchModule.choices]
    )
    display_name = models.CharField(
        max_length=200,
        blank=True,
        help_text="The name this group's owner gave the advertiser; blank: the advertiser's own name.",
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["added_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["group", "module", "advertiser"], name="unique_group_module_member")
        ]

    def __str__(self) -> str:
        return f"{self.group_id} / {self.module or 'shared'} / {self.advertiser_id}"


class TrackedGroupFork(models.Model):
    """A module whose membership left the shared one when it was removed from `shared_modules`."""

    group = models.ForeignKey(TrackedGroup, on_delete=models.CASCADE, related_name="forks")
    module = models.CharField(max_length=30, choices=ResearchModule.choices)
    forked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["module"]
        constraints = [models.UniqueConstraint(fields=["group", "module"], name="unique_group_fork")]

    def __str__(self) -> str:
        return f"{self.group_id} / {self.module}"


class Artifact(models.Model):
    """One entry of a brand's intelligence history: what an audit found, as free-form JSON."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="artifacts")
    module = models.CharField(max_length=30, choices=ResearchModule.choices)
    kind = models.CharField(max_length=40, default="audit")
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["brand", "-created_at"])]

    def __str__(self) -> str:
        return self.title
