"""What an audit gives back: its outcome for the artifact, or AuditFailed with a message for the owner."""

from __future__ import annotations

from dataclasses import dataclass


class AuditFailed(Exception):
    """An audit that ran and could not produce its result; the message is shown to the owner."""


@dataclass(frozen=True)
class AuditOutcome:
    title: str
    summary: str
    data: dict
