"""What the local webhook inbox received (docs/guide.md#the-local-demo; who sees what:
docs/decisions.md#the-local-webhook-inbox)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class InboxMessage(models.Model):
    """One POST to /demo/inbox/<token>, kept as it arrived, with the outcome of its signature check."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    token = models.CharField(max_length=64, db_index=True)
    received_at = models.DateTimeField(auto_now_add=True)
    headers = models.JSONField(default=dict)
    body = models.TextField(blank=True)
    event_type = models.CharField(max_length=100, blank=True)
    # True: signed with the secret of a subscription (or agent) whose URL is exactly this inbox's; False: there
    # are such, and no secret of theirs verifies it; None: there is none.
    signature_verified = models.BooleanField(null=True)
    # The subscription or agent whose secret verified it, and their owner: the one user shown the message.
    subscription_id = models.UUIDField(null=True, blank=True)
    agent_id = models.UUIDField(null=True, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )

    class Meta:
        ordering = ["-received_at"]
        indexes = [models.Index(fields=["owner", "token", "-received_at"])]

    def __str__(self) -> str:
        return f"{self.token} {self.event_type or '?'} {self.received_at:%H:%M:%S}"
