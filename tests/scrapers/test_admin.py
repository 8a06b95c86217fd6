from __future__ import annotations

import pytest

from scrapers.models import LocalJobStatus, SnapshotStatus
from tests.scrapers.factories import LocalScrapeJobFactory, SnapshotFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/admin/scrapers/snapshot/",
        "/admin/scrapers/snapshot/?status__exact=running&provider=local",
        "/admin/scrapers/snapshot/?q=pages",
        "/admin/scrapers/localscrapejob/",
    ],
)
def test_admin_lists_render(admin_client, url):
    SnapshotFactory()

    assert admin_client.get(url, secure=True).status_code == 200


def test_search_finds_a_snapshot_by_its_provider_id(admin_client):
    wanted, other = SnapshotFactory(), SnapshotFactory()

    html = admin_client.get(f"/admin/scrapers/snapshot/?q={wanted.snapshot_id}", secure=True).content.decode()

    assert wanted.snapshot_id in html
    assert other.snapshot_id not in html


def test_detail_shows_the_downloaded_results(admin_client):
    snapshot = SnapshotFactory(status=SnapshotStatus.READY, results=[{"title": "Acme Rockets"}])

    html = admin_client.get(f"/admin/scrapers/snapshot/{snapshot.pk}/change/", secure=True).content.decode()

    assert "Acme Rockets" in html


def test_refresh_action_asks_the_provider(admin_client):
    job = LocalScrapeJobFactory(status=LocalJobStatus.READY, records_count=3)
    snapshot = SnapshotFactory(snapshot_id=job.id)

    response = admin_client.post(
        "/admin/scrapers/snapshot/",
        {"action": "refresh_from_provider", "_selected_action": [str(snapshot.pk)]},
        secure=True,
    )

    assert response.status_code == 302, response.content
    snapshot.refresh_from_db()
    assert (snapshot.status, snapshot.records_count) == ("ready", 3)
    page = admin_client.get(response["Location"], secure=True).content.decode()
    assert "Asked the provider about 1 running snapshot(s)." in page
