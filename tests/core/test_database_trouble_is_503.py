"""A database that is busy or out of reach answers 503 with Retry-After and a code, never 500.

Every error here is real: an SQLite file whose write lock another connection holds, a PostgreSQL
connection the server terminated (as a restart does), and a server that accepts TCP but never answers.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time

import psycopg
import pytest
from django.conf import settings
from django.db import OperationalError, connection
from django.test import Client, RequestFactory, override_settings

from core.http.views import handler500
from tests.core.locked_sqlite_urls import write_to_locked_file


@pytest.fixture
def locked_sqlite(tmp_path):
    """An SQLite file in WAL mode whose write lock another connection holds until the test ends."""
    path = tmp_path / "locked.sqlite3"
    setup = sqlite3.connect(path, isolation_level=None)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE marks (note TEXT)")
    setup.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO marks (note) VALUES ('holder')")
    with override_settings(LOCKED_SQLITE_PATH=str(path), ROOT_URLCONF="tests.core.locked_sqlite_urls"):
        yield path
    holder.execute("ROLLBACK")
    holder.close()


def _rows(path) -> list[str]:
    with sqlite3.connect(path) as reader:
        return [note for (note,) in reader.execute("SELECT note FROM marks")]


def _assert_busy(response) -> None:
    assert response.status_code == 503, response.content
    assert json.loads(response.content) == {
        "detail": "The database is busy; nothing was changed. Try again shortly.",
        "code": "database_busy",
    }
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db
def test_an_api_view_that_cannot_get_the_sqlite_write_lock_is_503_database_busy(api, locked_sqlite):
    response = api.post("/api/v1/locked-write")

    _assert_busy(response)
    assert "X-Request-ID" in response
    assert _rows(locked_sqlite) == []  # nothing the request wrote survived (the holder's row is uncommitted)


@pytest.mark.django_db
def test_a_view_outside_drf_is_503_database_busy_too(locked_sqlite):
    response = Client().get("/locked-write", secure=True)

    _assert_busy(response)


@pytest.mark.django_db
def test_handler500_answers_503_for_a_busy_database_raised_outside_any_view(locked_sqlite):
    """An error from a middleware reaches Django's handler500 (when DEBUG is off)."""
    request = RequestFactory().get("/api/v1/tasks", secure=True)
    try:
        write_to_locked_file()
    except OperationalError:
        response = handler500(request)

    _assert_busy(response)
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        assert handler500(request).status_code == 500


@pytest.mark.django_db
def test_once_the_lock_is_free_the_same_write_goes_through(api, locked_sqlite, tmp_path):
    free = tmp_path / "free.sqlite3"
    sqlite3.connect(free).execute("CREATE TABLE marks (note TEXT)").connection.commit()
    with override_settings(LOCKED_SQLITE_PATH=str(free)):
        response = api.post("/api/v1/locked-write")

    assert response.status_code == 200
    assert _rows(free) == ["written"]


def _terminate(backend_pid: int) -> None:
    """What a PostgreSQL restart does to every open connection."""
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"],
        port=s["PORT"],
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [backend_pid])


def _assert_unavailable(response) -> None:
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "database_unavailable"
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_terminated_is_503_and_the_next_connection_serves(alice_api):
    assert alice_api.get("/api/v1/teams").status_code == 200  # also caches the rate-limit overrides
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]
    _terminate(backend_pid)
    try:
        response = alice_api.get("/api/v1/teams")
        _assert_unavailable(response)
        wrote = alice_api.post("/api/v1/teams", {"team_type": "seo", "display_name": "x", "tier": "growth"})
        _assert_unavailable(wrote)
    finally:
        connection.close()  # what Django does at the end of a request whose connection broke

    assert alice_api.get("/api/v1/teams").status_code == 200
    assert alice_api.get("/api/v1/teams").json()["total"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_database_error_in_a_middleware_is_503_too():
    """The rate limiter reads its overrides from the database before any view runs."""
    client = Client(raise_request_exception=False)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]
    _terminate(backend_pid)
    try:
        response = client.get("/api/v1/teams", secure=True)
    finally:
        connection.close()

    _assert_unavailable(response)


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never says a word: a database stuck mid-restart."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for sock in accepted:
        sock.close()
    server.close()


def test_postgresql_has_a_connect_timeout():
    assert settings.DATABASES["default"]["OPTIONS"]["connect_timeout"] == settings.DATABASE_CONNECT_TIMEOUT_SECONDS == 5


@pytest.mark.django_db(transaction=True)
def test_a_server_that_does_not_answer_is_503_after_the_connect_timeout_not_a_hang(alice_api, silent_server):
    assert alice_api.get("/api/v1/teams").status_code == 200
    saved = connection.settings_dict.copy()
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(silent_server))
    connection.settings_dict["OPTIONS"] = {**saved["OPTIONS"], "connect_timeout": 2}
    try:
        started = time.monotonic()
        response = alice_api.get("/api/v1/teams")
        elapsed = time.monotonic() - started
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)

    _assert_unavailable(response)
    assert 1.5 <= elapsed < 10
    assert alice_api.get("/api/v1/teams").status_code == 200


@pytest.mark.django_db
def test_every_operation_documents_the_database_503(api):
    schema = api.get("/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if path == "/health" or method not in {"get", "post", "put", "patch", "delete"}:
                continue
            documented = operation["responses"].get("503", {})
            assert "`database_busy`" in documented.get("description", ""), f"{method} {path}"
            assert "`database_unavailable`" in documented["description"], f"{method} {path}"
            assert "Retry-After" in documented.get("headers", {}), f"{method} {path}"
