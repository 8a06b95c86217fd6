"""Bright Data's Web Scraper API (https://docs.brightdata.com/api-reference/web-scraper-api).

- trigger:  `POST /datasets/v3/trigger?dataset_id=...` with a JSON list of inputs → `{"snapshot_id"}`
- progress: `GET /datasets/v3/progress/{snapshot_id}` → `{"status": starting|running|ready|failed, ...}`
            (a failed snapshot carries `error_message`)
- download: `GET /datasets/v3/snapshot/{snapshot_id}?format=json` → 200 the records, 202 while building,
            400 "Snapshot is empty" / "Snapshot is expired"

Errors: 401/403 → ProviderError (the token is refused); 404 → SnapshotNotFound / DatasetNotFound;
429, 5xx, timeouts and network failures → ProviderUnavailable (transient: try again later);
any other 4xx → ProviderError.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

from core.http.errors import ProviderError, ProviderUnavailable
from core.http.outbound import DeadlineTransport
from scrapers.providers.base import DatasetNotFound, Progress, SnapshotNotFound

logger = logging.getLogger(__name__)

TIMEOUT = httpx.Timeout(30.0, connect=5.0)
DEADLINE = 60.0  # seconds for a whole call, however slowly it answers (core.http.outbound.DeadlineTransport)


class BrightDataProvider:
    name = "brightdata"

    def __init__(
        self,
        *,
        token: str | None = None,
        base_url: str | None = None,
        client: httpx.Client | None = None,
        deadline: float = DEADLINE,
    ):
        token = token if token is not None else settings.BRIGHTDATA_API_TOKEN
        if not token:
            raise ProviderUnavailable("The Bright Data scraper is not configured (BRIGHTDATA_API_TOKEN is empty).")
        self.base_url = (base_url or settings.BRIGHTDATA_BASE_URL).rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._client = client or httpx.Client(timeout=TIMEOUT, transport=DeadlineTransport(deadline))

    # Interface ---------------------------------------------------------------------------------

    def trigger(self, *, dataset_id: str, inputs: list[dict]) -> str:
        response = self._send("POST", "/datasets/v3/trigger", params={"dataset_id": dataset_id}, json=list(inputs))
        if response.status_code == 404:
            raise DatasetNotFound(f"Bright Data has no dataset {dataset_id!r}.")
        self._raise_for_status(response)
        body = self._json(response)
        snapshot_id = body.get("snapshot_id") if isinstance(body, dict) else None
        if not isinstance(snapshot_id, str) or not snapshot_id:
            raise ProviderError("Bright Data accepted the collection but returned no snapshot_id.")
        return snapshot_id

    def progress(self, snapshot_id: str) -> Progress:
        response = self._send("GET", f"/datasets/v3/progress/{quote(snapshot_id, safe='')}")
        if response.status_code == 404:
            raise SnapshotNotFound(f"Bright Data has no snapshot {snapshot_id!r}.")
        self._raise_for_status(response)
        body = self._json(response)
        status = body.get("status") if isinstance(body, dict) else None
        if not isinstance(status, str) or not status:
            raise ProviderError("Bright Data answered the progress request without a status.")
        return Progress(
            status=status,
            records=_count(body.get("records")),
            errors=_count(body.get("errors")),
            error_message=_text(body.get("error_message") or body.get("error")),
        )

    def download(self, snapshot_id: str) -> list[dict] | None:
        response = self._send("GET", f"/datasets/v3/snapshot/{quote(snapshot_id, safe='')}", params={"format": "json"})
        if response.status_code == 202:  # {"status": "building", "message": "Snapshot is building, try again in 10s"}
            return None
        if response.status_code == 404:
            raise SnapshotNotFound(f"Bright Data has no snapshot {snapshot_id!r}.")
        if response.status_code == 400 and "empty" in _message(response).lower():
            return []  # "Snapshot is empty": ready, with no records
        self._raise_for_status(response)
        body = self._json(response)
        if isinstance(body, dict):  # a single record
            body = [body]
        if not isinstance(body, list):
            raise ProviderError("Bright Data returned snapshot data that is not a JSON list.")
        return [record for record in body if isinstance(record, dict)]

    # HTTP --------------------------------------------------------------------------------------

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            return self._client.request(method, self.base_url + path, headers=self._headers, **kwargs)
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable("Bright Data did not answer in time.") from exc
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"Bright Data could not be reached ({type(exc).__name__}).") from exc

    @staticmethod
    def _raise_for_status(response: httpx.Response) -> None:
        status = response.status_code
        if status < 300:
            return
        message = _message(response)
        if status in (401, 403):
            raise ProviderError(f"Bright Data refused the API token (HTTP {status}): {message}")
        if status == 429 or status >= 500:
            raise ProviderUnavailable(f"Bright Data is unavailable (HTTP {status}): {message}")
        raise ProviderError(f"Bright Data refused the request (HTTP {status}): {message}")

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(
                f"Bright Data answered HTTP {response.status_code} with a body that is not JSON."
            ) from exc


def _message(response: httpx.Response) -> str:
    """The provider's explanation: `{"error": ...}`, `{"message": ...}`, `{"validation_errors": [...]}` or text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(body, dict):
        for key in ("error", "message", "error_message"):
            if isinstance(body.get(key), str):
                return body[key][:300]
        if isinstance(body.get("validation_errors"), list):
            return "; ".join(str(e) for e in body["validation_errors"])[:300]
    return str(body)[:300]


def _count(value: Any) -> int | None:
    valid = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31
    return value if valid else None


def _text(value: Any) -> str | None:
    return value[:2000] if isinstance(value, str) and value else None
