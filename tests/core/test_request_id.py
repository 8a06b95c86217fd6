from __future__ import annotations

import json
import logging

import pytest

from core.ops.logging import JsonFormatter, RequestIdFilter, request_id_var

pytestmark = pytest.mark.django_db


def test_every_response_carries_a_request_id(api):
    first, second = api.get("/health"), api.get("/api/v1/nothing-here")

    assert len(first["X-Request-ID"]) == 32
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_an_incoming_id_is_kept_only_from_a_trusted_proxy(api, settings):
    import ipaddress

    assert api.get("/health", HTTP_X_REQUEST_ID="abc-123")["X-Request-ID"] != "abc-123"
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    assert api.get("/health", HTTP_X_REQUEST_ID="abc-123")["X-Request-ID"] == "abc-123"


def test_json_log_lines_carry_the_request_id():
    record = logging.LogRecord("app", logging.INFO, __file__, 1, "paid %s", ("pi_1",), None)
    record.task_id = "t1"
    token = request_id_var.set("req-42")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id_var.reset(token)

    line = json.loads(JsonFormatter().format(record))

    assert line["message"] == "paid pi_1"
    assert line["request_id"] == "req-42"
    assert line["task_id"] == "t1"
    assert line["level"] == "INFO"
