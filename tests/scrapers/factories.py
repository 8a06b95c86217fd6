from __future__ import annotations

from datetime import timedelta

import factory
from django.utils import timezone

from scrapers.models import LocalJobStatus, LocalScrapeJob, Snapshot, SnapshotStatus
from scrapers.providers.local import new_snapshot_id


class LocalScrapeJobFactory(factory.django.DjangoModelFactory):
    """The local provider's side of a snapshot, in whatever state a test needs."""

    class Meta:
        model = LocalScrapeJob

    id = factory.LazyFunction(new_snapshot_id)
    dataset_id = "pages"
    inputs = factory.LazyFunction(lambda: [{"url": "https://example.com/"}])
    status = LocalJobStatus.RUNNING


class SnapshotFactory(factory.django.DjangoModelFactory):
    """A running local snapshot backed by a LocalScrapeJob with the same id."""

    class Meta:
        model = Snapshot

    provider = "local"
    snapshot_id = factory.LazyFunction(lambda: LocalScrapeJobFactory().id)
    dataset_id = "pages"
    inputs = factory.LazyFunction(lambda: [{"url": "https://example.com/"}])
    status = SnapshotStatus.RUNNING
    next_poll_at = factory.LazyFunction(lambda: timezone.now() + timedelta(seconds=10))
    deadline_at = factory.LazyFunction(lambda: timezone.now() + timedelta(hours=2))
