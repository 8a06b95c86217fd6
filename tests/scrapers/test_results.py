"""Downloading a ready snapshot's records and keeping them."""

from __future__ import annotations

import pytest

from scrapers.models import SnapshotStatus
from scrapers.services import snapshot_fetch_results
from tests.scrapers.factories import SnapshotFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def ready_remote(brightdata_server):
    return SnapshotFactory(provider="brightdata", snapshot_id="s_remote", status=SnapshotStatus.READY)


def test_records_are_downloaded_and_kept(brightdata_server, ready_remote):
    brightdata_server.reply = (200, [{"url": "https://a.example", "title": "A\x00cme"}, {"url": "https://b.example"}])

    assert snapshot_fetch_results(snapshot_pk=ready_remote.pk) is True

    ready_remote.refresh_from_db()
    assert ready_remote.results == [{"url": "https://a.example", "title": "Acme"}, {"url": "https://b.example"}]
    assert ready_remote.records_count == 2  # progress had not said
    assert ready_remote.results_fetched_at is not None
    assert brightdata_server.requests[-1]["path"] == "/datasets/v3/snapshot/s_remote?format=json"


def test_stored_results_are_not_downloaded_again(brightdata_server, ready_remote):
    brightdata_server.reply = (200, [{"n": 1}])
    snapshot_fetch_results(snapshot_pk=ready_remote.pk)
    brightdata_server.reply = (200, [{"n": 2}])

    snapshot_fetch_results(snapshot_pk=ready_remote.pk)

    ready_remote.refresh_from_db()
    assert ready_remote.results == [{"n": 1}]
    assert len(brightdata_server.requests) == 1


def test_while_building_the_download_is_tried_again_later(brightdata_server, ready_remote):
    brightdata_server.reply = (202, {"status": "building", "message": "Snapshot is building, try again in 10s"})

    assert snapshot_fetch_results(snapshot_pk=ready_remote.pk) is False
    assert snapshot_fetch_results(snapshot_pk=ready_remote.pk, final_attempt=True) is True

    ready_remote.refresh_from_db()
    assert ready_remote.results is None
    assert ready_remote.error_message == "The results could not be downloaded: the provider was still building them"


def test_expired_results_are_recorded(brightdata_server, ready_remote):
    brightdata_server.reply = (400, {"error": "Snapshot is expired"})

    assert snapshot_fetch_results(snapshot_pk=ready_remote.pk) is True

    ready_remote.refresh_from_db()
    assert ready_remote.status == "ready"
    assert "Snapshot is expired" in ready_remote.error_message


def test_a_running_snapshot_has_no_results_to_fetch(brightdata_server):
    snapshot = SnapshotFactory(provider="brightdata", snapshot_id="s_running")

    assert snapshot_fetch_results(snapshot_pk=snapshot.pk) is True
    assert brightdata_server.requests == []
