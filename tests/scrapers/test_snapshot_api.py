"""The staff endpoints: trigger, list, and the live progress of one snapshot."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scrapers.models import LocalJobStatus, LocalScrapeJob, Snapshot, SnapshotStatus
from tests.scrapers.factories import LocalScrapeJobFactory, SnapshotFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/admin/scrapers/scraperprovider/snapshots"


def trigger(client, *urls, dataset_id="pages"):
    return client.post(URL, {"dataset_id": dataset_id, "inputs": [{"url": u} for u in urls]}, format="json")


# --- The local provider end to end ---------------------------------------------------------------------


def test_local_snapshot_goes_running_then_ready(staff_api, staff, pages, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as scraper:  # captured, not run yet
        response = trigger(staff_api, f"{pages}/acme", f"{pages}/globex")

    assert response.status_code == 201, response.content
    created = response.json()
    assert re.fullmatch(r"s_[a-z0-9]{20}", created["snapshot_id"])
    assert created["status"] == "running"
    assert created["provider"] == "local"
    assert created["created_by"] == str(staff.id)
    assert created["inputs"] == [{"url": f"{pages}/acme"}, {"url": f"{pages}/globex"}]

    running = staff_api.get(f"{URL}/{created['snapshot_id']}").json()
    assert running["status"] == "running"
    assert running["provider_status"] == "starting"
    assert (running["live"], running["stale"]) == (True, False)
    assert running["records_count"] == 0

    for callback in scraper:  # the Celery task (eager) scrapes both pages
        callback()
    with django_capture_on_commit_callbacks(execute=True):  # the results download runs after the refresh
        ready = staff_api.get(f"{URL}/{created['snapshot_id']}").json()

    assert ready["status"] == "ready"
    assert ready["provider_status"] == "ready"
    assert ready["records_count"] == 2
    assert ready["errors_count"] == 0
    assert ready["error_message"] is None
    assert ready["completed_at"] is not None
    assert ready["next_poll_at"] is None
    stored = Snapshot.objects.get(snapshot_id=created["snapshot_id"])
    assert stored.results_fetched_at is not None
    assert [(r["url"], r["title"]) for r in stored.results] == [
        (f"{pages}/acme", "Acme Rockets"),
        (f"{pages}/globex", "Globex"),
    ]
    assert stored.results[0]["description"] == "Rockets for everyone"


def test_unreachable_url_fails_the_snapshot_with_the_error(staff_api, dead_url, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        snapshot_id = trigger(staff_api, f"{dead_url}/page").json()["snapshot_id"]

    failed = staff_api.get(f"{URL}/{snapshot_id}").json()

    assert failed["status"] == "failed"
    assert failed["provider_status"] == "failed"
    assert failed["records_count"] == 0
    assert failed["errors_count"] == 1
    assert f"{dead_url}/page" in failed["error_message"]
    assert "could not be fetched" in failed["error_message"]
    assert Snapshot.objects.get(snapshot_id=snapshot_id).status == SnapshotStatus.FAILED


def test_some_failed_inputs_leave_the_snapshot_ready_with_an_error_count(
    staff_api, pages, dead_url, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        snapshot_id = trigger(staff_api, f"{pages}/acme", f"{pages}/missing", f"{dead_url}/x").json()["snapshot_id"]

    ready = staff_api.get(f"{URL}/{snapshot_id}").json()

    assert ready["status"] == "ready"
    assert (ready["records_count"], ready["errors_count"]) == (1, 2)
    assert ready["error_message"].startswith(
        f"2 of 3 inputs failed. First: {pages}/missing: The page answered HTTP 404."
    )


# --- The progress endpoint --------------------------------------------------------------------------------


def test_progress_reports_the_provider_failure_message(staff_api):
    job = LocalScrapeJobFactory(status=LocalJobStatus.FAILED, error_message="1 of 1 inputs failed. First: boom")
    snapshot = SnapshotFactory(snapshot_id=job.id)

    body = staff_api.get(f"{URL}/{snapshot.snapshot_id}").json()

    assert (body["status"], body["error_message"], body["live"]) == (
        "failed",
        "1 of 1 inputs failed. First: boom",
        True,
    )


def test_final_snapshots_are_answered_from_storage(staff_api):
    snapshot = SnapshotFactory(status=SnapshotStatus.READY, records_count=7, provider_status="ready")
    LocalScrapeJob.objects.filter(pk=snapshot.snapshot_id).delete()  # the provider is not asked again

    body = staff_api.get(f"{URL}/{snapshot.snapshot_id}").json()

    assert (body["status"], body["records_count"], body["live"], body["stale"]) == ("ready", 7, False, False)


def test_a_snapshot_the_provider_lost_is_marked_failed(staff_api):
    snapshot = SnapshotFactory()
    LocalScrapeJob.objects.filter(pk=snapshot.snapshot_id).delete()

    body = staff_api.get(f"{URL}/{snapshot.snapshot_id}").json()

    assert body["status"] == "failed"
    assert body["error_message"] == "The local provider no longer knows this snapshot."


def test_unreachable_provider_returns_the_stored_state_marked_stale(staff_api, settings, dead_url):
    settings.BRIGHTDATA_API_TOKEN = "bd-test-token"
    settings.BRIGHTDATA_BASE_URL = dead_url
    snapshot = SnapshotFactory(
        provider="brightdata", snapshot_id="s_remote1", provider_status="running", records_count=3
    )

    response = staff_api.get(f"{URL}/s_remote1")

    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["records_count"], body["live"], body["stale"]) == ("running", 3, False, True)
    assert "could not be reached" in body["stale_reason"]
    snapshot.refresh_from_db()
    assert snapshot.last_polled_at is None


def test_progress_from_bright_data_is_stored(staff_api, brightdata_server):
    SnapshotFactory(provider="brightdata", snapshot_id="s_m4x7enmven8djfqak")
    brightdata_server.reply = (200, {"snapshot_id": "s_m4x7enmven8djfqak", "dataset_id": "gd_x", "status": "running"})

    body = staff_api.get(f"{URL}/s_m4x7enmven8djfqak").json()

    assert (body["status"], body["provider_status"], body["live"]) == ("running", "running", True)
    assert brightdata_server.requests[-1]["path"] == "/datasets/v3/progress/s_m4x7enmven8djfqak"
    assert brightdata_server.requests[-1]["authorization"] == "Bearer bd-test-token"


def test_past_its_deadline_a_running_snapshot_fails_on_refresh(staff_api):
    snapshot = SnapshotFactory(deadline_at=timezone.now() - timedelta(seconds=1))

    body = staff_api.get(f"{URL}/{snapshot.snapshot_id}").json()

    assert body["status"] == "failed"
    assert body["error_message"].startswith("Gave up: the snapshot was not ready")


@pytest.mark.parametrize("snapshot_id", ["s_doesnotexist", "s_%00x", "s_" + "x" * 200])
def test_unknown_snapshot_is_404(staff_api, snapshot_id):
    SnapshotFactory()

    response = staff_api.get(f"{URL}/{snapshot_id}")

    assert response.status_code == 404
    assert response.json() == {"detail": "No snapshot with this id.", "code": "not_found"}


# --- List ----------------------------------------------------------------------------------------------


def test_list_is_newest_first_and_filters(staff_api):
    old = SnapshotFactory(status=SnapshotStatus.READY)
    Snapshot.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=1))
    new = SnapshotFactory()
    remote = SnapshotFactory(provider="brightdata", snapshot_id="s_remote")

    everything = staff_api.get(URL).json()
    running = staff_api.get(URL, {"status": "running"}).json()
    local_ready = staff_api.get(URL, {"status": "ready", "provider": "local"}).json()
    paged = staff_api.get(URL, {"limit": 1, "offset": 1}).json()

    assert [s["snapshot_id"] for s in everything["items"]] == [remote.snapshot_id, new.snapshot_id, old.snapshot_id]
    assert (everything["total"], everything["has_more"]) == (3, False)
    assert {s["snapshot_id"] for s in running["items"]} == {new.snapshot_id, remote.snapshot_id}
    assert [s["snapshot_id"] for s in local_ready["items"]] == [old.snapshot_id]
    assert (paged["items"][0]["snapshot_id"], paged["has_more"]) == (new.snapshot_id, True)


def test_list_query_count_does_not_grow_with_rows(staff_api, django_assert_num_queries):
    SnapshotFactory()
    staff_api.get(URL)  # warm up caches
    with CaptureQueriesContext(connection) as one:
        staff_api.get(URL)
    SnapshotFactory.create_batch(24)
    with django_assert_num_queries(len(one.captured_queries)):
        assert len(staff_api.get(URL, {"limit": 100}).json()["items"]) == 25


def test_list_rejects_unknown_filters(staff_api):
    response = staff_api.get(URL, {"status": "starting", "limit": 0})

    assert response.status_code == 422
    assert {tuple(e["loc"]) for e in response.json()["detail"]} == {("query", "status"), ("query", "limit")}


# --- Trigger -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "loc", "type_"),
    [
        ({"inputs": [{"url": "https://example.com"}]}, ["body", "dataset_id"], "missing"),
        ({"dataset_id": "pages", "inputs": []}, ["body", "inputs"], "too_short"),
        ({"dataset_id": "pages", "inputs": [{"url": "not a url"}]}, ["body", "inputs", 0, "url"], "url_parsing"),
        ({"dataset_id": "pages", "inputs": [{}]}, ["body", "inputs", 0, "url"], "missing"),
        ({"dataset_id": "a b", "inputs": [{"url": "https://example.com"}]}, ["body", "dataset_id"], "value_error"),
        ({"dataset_id": "pages", "inputs": [{"url": "https://e.com"}] * 101}, ["body", "inputs"], "too_long"),
        ({"dataset_id": "pages", "inputs": "https://e.com"}, ["body", "inputs"], "list_type"),
    ],
)
def test_trigger_validates_its_body(staff_api, body, loc, type_):
    response = staff_api.post(URL, body, format="json")

    assert response.status_code == 422, response.content
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]
    assert not Snapshot.objects.exists()
    assert not LocalScrapeJob.objects.exists()


def test_a_nul_character_anywhere_in_the_body_is_refused_by_the_parser(staff_api):
    response = staff_api.post(URL, {"dataset_id": "pages", "inputs": [{"url": "https://e.com/\x00"}]}, format="json")

    assert response.status_code == 422
    assert [e["type"] for e in response.json()["detail"]] == ["json_invalid"]
    assert not Snapshot.objects.exists()


def test_trigger_at_bright_data(staff_api, settings, brightdata_server):
    settings.SCRAPER_PROVIDER = "brightdata"
    brightdata_server.reply = (200, {"snapshot_id": "s_m4x7enmven8djfqak"})

    response = trigger(staff_api, "https://www.example.com/a", dataset_id="gd_l1vikfnt1wgvvqz95w")

    assert response.status_code == 201, response.content
    assert (response.json()["provider"], response.json()["snapshot_id"]) == ("brightdata", "s_m4x7enmven8djfqak")
    assert brightdata_server.requests == [
        {
            "method": "POST",
            "path": "/datasets/v3/trigger?dataset_id=gd_l1vikfnt1wgvvqz95w",
            "authorization": "Bearer bd-test-token",
            "body": [{"url": "https://www.example.com/a"}],
        }
    ]


def test_trigger_of_an_unknown_dataset_is_422_and_stores_nothing(staff_api, settings, brightdata_server):
    settings.SCRAPER_PROVIDER = "brightdata"
    brightdata_server.reply = (404, {"error": "dataset does not exist"})

    response = trigger(staff_api, "https://www.example.com/a", dataset_id="gd_nope")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "dataset_id"]
    assert not Snapshot.objects.exists()


@pytest.mark.parametrize(
    ("status", "expected", "code"),
    [(401, 502, "provider_error"), (429, 503, "provider_unavailable"), (500, 503, "provider_unavailable")],
)
def test_trigger_refused_or_unavailable_stores_nothing(staff_api, settings, brightdata_server, status, expected, code):
    settings.SCRAPER_PROVIDER = "brightdata"
    brightdata_server.reply = (status, {"error": "nope"})

    response = trigger(staff_api, "https://www.example.com/a", dataset_id="gd_x")

    assert (response.status_code, response.json()["code"]) == (expected, code)
    assert not Snapshot.objects.exists()


def test_trigger_without_a_bright_data_token_is_503(staff_api, settings):
    settings.SCRAPER_PROVIDER = "brightdata"
    settings.BRIGHTDATA_API_TOKEN = ""

    response = trigger(staff_api, "https://www.example.com/a")

    assert (response.status_code, response.json()["code"]) == (503, "provider_unavailable")


# --- Who may call ------------------------------------------------------------------------------------------


@pytest.fixture
def any_snapshot(db):
    return SnapshotFactory()


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", URL), ("post", URL), ("get", f"{URL}/{{id}}")],
)
@pytest.mark.parametrize(
    ("client", "status", "code"),
    [
        ("alice_api", 403, "permission_denied"),
        ("alice_key_api", 403, "api_key_not_allowed"),
        ("api", 401, "not_authenticated"),
    ],
)
def test_only_staff_may_call(request, any_snapshot, method, path, client, status, code):
    client = request.getfixturevalue(client)
    response = getattr(client, method)(
        path.replace("{id}", any_snapshot.snapshot_id), {"dataset_id": "pages", "inputs": [{"url": "https://e.com"}]}
    )

    assert (response.status_code, response.json()["code"]) == (status, code)
    assert Snapshot.objects.count() == 1


def test_staff_may_call(staff_api, any_snapshot):
    assert staff_api.get(URL).status_code == 200
    assert staff_api.get(f"{URL}/{any_snapshot.snapshot_id}").status_code == 200


def test_a_snapshot_id_the_provider_reuses_is_refused(staff_api, settings, brightdata_server):
    settings.SCRAPER_PROVIDER = "brightdata"
    brightdata_server.reply = (200, {"snapshot_id": "s_same"})
    assert trigger(staff_api, "https://www.example.com/a").status_code == 201

    response = trigger(staff_api, "https://www.example.com/b")

    assert (response.status_code, response.json()["code"]) == (502, "provider_error")
    assert Snapshot.objects.count() == 1
