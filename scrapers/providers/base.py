"""The interface every scraping provider implements, and the errors it raises.

A provider runs a collection ("snapshot") of a dataset over a list of inputs somewhere (this
machine, or a provider's cloud), reports its progress, and hands out the records once ready.
Statuses are the provider's own words (`starting`, `running`, `ready`, `failed`, ...);
`scrapers.models.snapshot_status_for` maps them onto ours (docs/decisions.md#states).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core.http.errors import NotFound, ProviderError


@dataclass(frozen=True)
class Progress:
    status: str  # the provider's raw status
    records: int | None = None
    errors: int | None = None
    error_message: str | None = None


class ScraperProvider(Protocol):
    name: str

    def trigger(self, *, dataset_id: str, inputs: list[dict]) -> str:
        """Start a collection; return the provider's snapshot id."""

    def progress(self, snapshot_id: str) -> Progress:
        """The snapshot's current state. Raises SnapshotNotFound for an id the provider does not know."""

    def download(self, snapshot_id: str) -> list[dict] | None:
        """The records of a finished snapshot, or None while they are still being built."""


class SnapshotNotFound(NotFound):
    """The provider does not know this snapshot id (it never existed, or the provider dropped it)."""

    code = "snapshot_not_found"
    default_message = "The scraping provider has no such snapshot."


class DatasetNotFound(ProviderError):
    """The provider does not know the dataset a collection was asked for."""

    code = "dataset_not_found"
    default_message = "The scraping provider has no such dataset."


def strip_nul(value):
    """`value` with NUL characters removed from every string in it: PostgreSQL text and jsonb refuse them,
    and scraped pages and provider answers are not ours to trust."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [strip_nul(v) for v in value]
    if isinstance(value, dict):
        return {strip_nul(k): strip_nul(v) for k, v in value.items()}
    return value
