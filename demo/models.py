"""What the local webhook inbox received (docs/guide.md#the-local-demo)."""

from __future__ import annotations

import uuid

from django.db import models


class InboxMessage(models.Model):
    """One POST to /demo/inbox/<token>, kept as it arrived, with the outcome of its signature check."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    token = models.CharField(max_length=64, db_index=True)
    received_at = models.DateTimeField(auto_now_add=True)
    headers = models.JSONField(default=dict)
    body = models.TextField(blank=True)
    event_type = models.CharField(max_length=100, blank=True)
    # True / False: checked with the secret(s) of the subscription whose URL is this inbox; None: no such subscription.
    signature_verified = models.BooleanField(null=True)
    subscription_id = models.UUIDField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.token} {self.event_type or '?'} {self.received_at:%H:%M:%S}"
