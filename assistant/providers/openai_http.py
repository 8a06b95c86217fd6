"""A small client for OpenAI-compatible HTTP APIs: JSON in and out, timeouts, capped retries.

Retried: 429 and 5xx answers and network errors, with exponential backoff (honouring a short
`Retry-After`), at most `max_retries` times. Anything else fails at once. Failures surface as the
project's errors: an answer we cannot use is a ProviderError (502); a provider we cannot reach
or that is not configured is ProviderUnavailable (503).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
from django.conf import settings

from core.http.errors import ProviderError, ProviderUnavailable
from core.http.outbound import DeadlineTransport

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.5  # seconds; doubled per attempt
BACKOFF_CAP = 8.0  # no single wait is longer than this


class OpenAIClient:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float = 60.0,
        max_retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not api_key:
            raise ProviderUnavailable("The OpenAI-compatible provider is not configured (OPENAI_API_KEY is empty).")
        self.base_url = base_url.rstrip("/")
        self.max_retries = max(0, max_retries)
        self._sleep = sleep
        self._client = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
            # `timeout` bounds each attempt as a whole, not only each read (core.http.outbound.DeadlineTransport).
            transport=transport or DeadlineTransport(timeout),
            follow_redirects=False,
        )

    @classmethod
    def from_settings(cls, **overrides: Any) -> OpenAIClient:
        options = {
            "api_key": settings.OPENAI_API_KEY,
            "base_url": settings.OPENAI_BASE_URL,
            "timeout": settings.OPENAI_TIMEOUT_SECONDS,
            "max_retries": settings.OPENAI_MAX_RETRIES,
            **overrides,
        }
        return cls(**options)

    def close(self) -> None:
        self._client.close()

    def post_json(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = self._client.post(path, json=payload)
            except httpx.TransportError as exc:
                logger.warning("OpenAI-compatible call %s failed (attempt %d): %s", path, attempt + 1, exc)
                if last:
                    raise ProviderUnavailable("The language/image provider could not be reached.") from exc
                self._sleep(self._backoff(attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and not last:
                logger.warning(
                    "OpenAI-compatible call %s answered %d (attempt %d)", path, response.status_code, attempt + 1
                )
                self._sleep(self._backoff(attempt, response.headers.get("retry-after")))
                continue
            return self._parse(response)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _backoff(attempt: int, retry_after: str | None) -> float:
        wait = BACKOFF_BASE * (2**attempt)
        if retry_after:
            with contextlib.suppress(ValueError):  # an HTTP date: keep our own backoff
                wait = max(wait, float(retry_after))
        return min(wait, BACKOFF_CAP)

    @staticmethod
    def _parse(response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            # The provider's own message stays in our logs: it may quote account details.
            logger.warning("OpenAI-compatible provider answered %d: %s", response.status_code, _message(response))
            raise ProviderError(f"The provider refused the request (HTTP {response.status_code}).")
        try:
            body = response.json()
        except ValueError as exc:
            raise ProviderError("The provider answered with something other than JSON.") from exc
        if not isinstance(body, dict):
            raise ProviderError("The provider answered with an unexpected JSON shape.")
        return body


def _message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return "no details"
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"][:300]
    return "no details"
