"""The Bright Data adapter against httpx.MockTransport: exact requests, every documented answer mapped."""

from __future__ import annotations

import json

import httpx
import pytest

from core.http.errors import ProviderError, ProviderUnavailable
from scrapers.models import SnapshotStatus, snapshot_status_for
from scrapers.providers import DatasetNotFound, SnapshotNotFound, get_scraper_provider
from scrapers.providers.brightdata import BrightDataProvider

BASE = "https://api.brightdata.example"


class Recorder:
    """A MockTransport handler answering with a fixed response (or raising), recording every request."""

    def __init__(self, status: int = 200, body=None, *, raw: bytes | None = None, raises: Exception | None = None):
        self.status, self.body, self.raw, self.raises = status, body, raw, raises
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.raises:
            raise self.raises
        if self.raw is not None:
            return httpx.Response(self.status, content=self.raw)
        return httpx.Response(self.status, json=self.body)


def provider_for(handler: Recorder) -> BrightDataProvider:
    return BrightDataProvider(
        token="tok_123", base_url=BASE, client=httpx.Client(transport=httpx.MockTransport(handler))
    )


# --- trigger --------------------------------------------------------------------------------------------


def test_trigger_posts_the_inputs_and_returns_the_snapshot_id():
    handler = Recorder(200, {"snapshot_id": "s_m4x7enmven8djfqak"})

    snapshot_id = provider_for(handler).trigger(
        dataset_id="gd_l1vikfnt1wgvvqz95w", inputs=[{"url": "https://a.example/1"}, {"url": "https://a.example/2"}]
    )

    assert snapshot_id == "s_m4x7enmven8djfqak"
    [request] = handler.requests
    assert request.method == "POST"
    assert str(request.url) == f"{BASE}/datasets/v3/trigger?dataset_id=gd_l1vikfnt1wgvvqz95w"
    assert request.headers["Authorization"] == "Bearer tok_123"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == [{"url": "https://a.example/1"}, {"url": "https://a.example/2"}]


def test_trigger_of_an_unknown_dataset():
    with pytest.raises(DatasetNotFound):
        provider_for(Recorder(404, {"error": "dataset does not exist"})).trigger(dataset_id="gd_x", inputs=[])


@pytest.mark.parametrize(
    ("status", "body", "error", "text"),
    [
        (400, {"validation_errors": ["Should be at least 1 inputs"]}, ProviderError, "Should be at least 1 inputs"),
        (400, {"error": "This dataset is not allowed for API"}, ProviderError, "not allowed for API"),
        (401, {"error": "User authentication is required"}, ProviderError, "refused the API token"),
        (403, {"error": "Forbidden"}, ProviderError, "refused the API token"),
        (429, {"error": "You have too many running jobs for this dataset."}, ProviderUnavailable, "HTTP 429"),
        (500, {"error": "Internal server error"}, ProviderUnavailable, "HTTP 500"),
        (503, None, ProviderUnavailable, "HTTP 503"),
        (200, {"unexpected": True}, ProviderError, "no snapshot_id"),
    ],
)
def test_trigger_errors(status, body, error, text):
    with pytest.raises(error) as caught:
        provider_for(Recorder(status, body)).trigger(dataset_id="gd_x", inputs=[{"url": "https://a.example"}])

    assert type(caught.value) is error
    assert text in caught.value.message


# --- progress -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider_status", "ours"),
    [
        ("starting", SnapshotStatus.RUNNING),
        ("running", SnapshotStatus.RUNNING),
        ("collecting", SnapshotStatus.RUNNING),
        ("digesting", SnapshotStatus.RUNNING),
        ("building", SnapshotStatus.RUNNING),
        ("ready", SnapshotStatus.READY),
        ("failed", SnapshotStatus.FAILED),
        ("canceled", SnapshotStatus.FAILED),
        ("cancelled", SnapshotStatus.FAILED),
    ],
)
def test_progress_statuses(provider_status, ours):
    handler = Recorder(200, {"snapshot_id": "s_abc", "dataset_id": "gd_x", "status": provider_status})

    progress = provider_for(handler).progress("s_abc")

    assert progress.status == provider_status
    assert snapshot_status_for(progress.status) is ours
    [request] = handler.requests
    assert (request.method, str(request.url)) == ("GET", f"{BASE}/datasets/v3/progress/s_abc")
    assert request.headers["Authorization"] == "Bearer tok_123"


def test_progress_carries_counts_and_the_failure_message():
    body = {"status": "failed", "records": 12, "errors": 3, "error_message": "Account is suspended"}

    progress = provider_for(Recorder(200, body)).progress("s_abc")

    assert (progress.records, progress.errors, progress.error_message) == (12, 3, "Account is suspended")


def test_progress_ignores_counts_that_are_not_counts():
    progress = provider_for(Recorder(200, {"status": "running", "records": "many", "errors": True})).progress("s_abc")

    assert (progress.records, progress.errors, progress.error_message) == (None, None, None)


def test_progress_escapes_the_snapshot_id_in_the_path():
    handler = Recorder(200, {"status": "running"})

    provider_for(handler).progress("s_a/b?c")

    assert handler.requests[0].url.raw_path == b"/datasets/v3/progress/s_a%2Fb%3Fc"


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (Recorder(404, {"error": "Snapshot does not exist"}), SnapshotNotFound),
        (Recorder(401, {"error": "User authentication is required"}), ProviderError),
        (Recorder(403, {"error": "Account is suspended"}), ProviderError),
        (Recorder(429, {"error": "Too many requests"}), ProviderUnavailable),
        (Recorder(500, raw=b"Something went wrong. Our team is looking into it."), ProviderUnavailable),
        (Recorder(502, raw=b"<html>Bad gateway</html>"), ProviderUnavailable),
        (Recorder(200, raw=b"not json"), ProviderError),
        (Recorder(200, {"snapshot_id": "s_abc"}), ProviderError),  # no status
        (Recorder(raises=httpx.ReadTimeout("timed out")), ProviderUnavailable),
        (Recorder(raises=httpx.ConnectTimeout("timed out")), ProviderUnavailable),
        (Recorder(raises=httpx.ConnectError("refused")), ProviderUnavailable),
    ],
)
def test_progress_errors(handler, error):
    with pytest.raises(error) as caught:
        provider_for(handler).progress("s_abc")

    assert type(caught.value) is error


# --- download -------------------------------------------------------------------------------------------


def test_download_returns_the_records():
    records = [{"url": "https://a.example/1", "title": "One"}, {"url": "https://a.example/2", "title": "Two"}]
    handler = Recorder(200, records)

    assert provider_for(handler).download("s_abc") == records
    [request] = handler.requests
    assert (request.method, str(request.url)) == ("GET", f"{BASE}/datasets/v3/snapshot/s_abc?format=json")
    assert request.headers["Authorization"] == "Bearer tok_123"


@pytest.mark.parametrize(
    "body",
    [
        {"status": "building", "message": "Snapshot is building, try again in 10s"},
        {"status": "running", "message": "Snapshot is not ready yet, try again in 10s"},
    ],
)
def test_download_while_building_is_none(body):
    assert provider_for(Recorder(202, body)).download("s_abc") is None


def test_download_of_an_empty_snapshot_is_an_empty_list():
    assert provider_for(Recorder(400, {"error": "Snapshot is empty"})).download("s_abc") == []


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (Recorder(400, {"error": "Snapshot is expired"}), ProviderError),
        (Recorder(404, {"error": "Snapshot does not exist"}), SnapshotNotFound),
        (Recorder(401, {"error": "User authentication is required"}), ProviderError),
        (Recorder(500, {"error": "Internal server error"}), ProviderUnavailable),
        (Recorder(200, "a string"), ProviderError),
        (Recorder(raises=httpx.ReadTimeout("timed out")), ProviderUnavailable),
    ],
)
def test_download_errors(handler, error):
    with pytest.raises(error) as caught:
        provider_for(handler).download("s_abc")

    assert type(caught.value) is error


# --- configuration ---------------------------------------------------------------------------------------


def test_without_a_token_the_provider_is_unavailable(settings):
    settings.BRIGHTDATA_API_TOKEN = ""

    with pytest.raises(ProviderUnavailable):
        get_scraper_provider("brightdata")


def test_provider_is_chosen_by_setting(settings):
    settings.BRIGHTDATA_API_TOKEN = "tok"
    settings.SCRAPER_PROVIDER = "brightdata"

    assert get_scraper_provider().name == "brightdata"
    assert get_scraper_provider("local").name == "local"
