"""Control characters a client sends (in the path, the query, a header) never reach a log line raw:
the formatters escape them, so a request cannot forge a log line or drive the terminal that shows it.
Checked at the formatters the project configures (settings.LOGGING, gunicorn's JsonFormatter) and
through the local HTTPS server's access log."""

from __future__ import annotations

import io
import json
import logging
import logging.config
import time

import pytest
from django.conf import settings

from core.ops.logging import JsonFormatter
from tests.security.tlsserver_support import read_all, running_server, tls_connect

pytestmark = pytest.mark.django_db

HOSTILE = "/api/v1/x\x1b[2J\x1b]0;pwned\x07\r\n2026-01-01 00:00:00,000 INFO fake [-] forged\x7f\x9b31m\u2028end"
RAW = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029)]


def _record(message: str, *args, **extra) -> logging.LogRecord:
    record = logging.LogRecord("django.server", logging.INFO, __file__, 1, message, args, None)
    record.request_id = "-"
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def _configured_formatters() -> dict[str, logging.Formatter]:
    """The formatters settings.LOGGING names, built as dictConfig builds them (no global change)."""
    configurator = logging.config.DictConfigurator(settings.LOGGING)
    return {name: configurator.configure_formatter(dict(spec)) for name, spec in settings.LOGGING["formatters"].items()}


def _assert_clean(line: str) -> None:
    assert not [ch for ch in line if ch in RAW], repr(line)


@pytest.mark.parametrize("name", ["plain", "json"])
def test_the_configured_formatters_escape_control_characters(name):
    formatter = _configured_formatters()[name]

    line = formatter.format(_record('"%s" %s', f"GET {HOSTILE} HTTP/1.1", "404", path=HOSTILE))

    _assert_clean(line)
    assert "\\x1b[2J" in line
    assert "forged" in line


def test_json_lines_escape_extra_fields_and_stay_one_json_object():
    line = JsonFormatter().format(_record("%s", HOSTILE, path=HOSTILE, user_agent="ua\x1b[31m\r\nx"))

    _assert_clean(line)
    assert "\n" not in line
    entry = json.loads(line)
    assert "\x1b" not in entry["path"] + entry["user_agent"] + entry["message"]
    assert entry["path"].startswith("/api/v1/x\\x1b[2J")


def test_a_traceback_keeps_its_lines_but_its_message_is_escaped():
    formatter = _configured_formatters()["plain"]
    try:
        raise ValueError("bad \x1b[31m value")
    except ValueError:
        record = logging.LogRecord("app", logging.ERROR, __file__, 1, "failed %s", ("x\r\ny",), sys_exc_info())
        record.request_id = "-"

    line = formatter.format(record)

    assert "\x1b" not in line and "\r" not in line
    assert "failed x\\r\\ny" in line
    assert "Traceback (most recent call last):\n" in line


def sys_exc_info():
    import sys

    return sys.exc_info()


def test_the_local_https_servers_access_log_is_escaped(tmp_path):
    """A request line with ESC and DEL in its path, through the real server, logs escaped."""
    captured = io.StringIO()
    access = logging.getLogger("django.server")
    handlers = access.handlers if not access.propagate or access.handlers else logging.getLogger().handlers
    # The project's console handler (pytest adds capturing handlers of its own beside it).
    streams = [(h, h.setStream(captured)) for h in handlers if type(h) is logging.StreamHandler]
    assert streams, "the access log has no stream handler"
    try:
        with running_server(tmp_path) as server, tls_connect(server, timeout=5) as tls:
            tls.sendall(
                b"GET /api/v1/x\x1b[2J\x7f?q=\x1b]0;t\x07 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            )
            read_all(tls)
            deadline = time.monotonic() + 5
            while "/api/v1/x" not in captured.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        for handler, previous in streams:
            handler.setStream(previous)

    logged = captured.getvalue()
    assert "/api/v1/x" in logged
    for line in logged.splitlines():
        _assert_clean(line)
    assert "\\x1b[2J" in logged
