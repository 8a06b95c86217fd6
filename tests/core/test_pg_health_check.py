"""The PostgreSQL backend's health check (core.db.backends.postgresql): no round trip on a healthy idle
connection, a closed one noticed and replaced before the request's first query."""

from __future__ import annotations

import select

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _other_connection():
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        dbname=settings["NAME"],
        autocommit=True,
    )


def test_a_healthy_idle_connection_is_usable_without_a_query():
    connection.ensure_connection()
    sent = []
    raw = connection.connection
    original = raw.execute

    def watch(*args, **kwargs):  # psycopg's method, not ours: the check must not send anything
        sent.append(args)
        return original(*args, **kwargs)

    raw.execute = watch
    cursor_factory = raw.cursor
    raw.cursor = lambda *a, **k: sent.append("cursor") or cursor_factory(*a, **k)
    try:
        assert connection.is_usable()
    finally:
        raw.execute, raw.cursor = original, cursor_factory
    assert sent == []


def test_a_connection_the_server_ended_is_not_usable():
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    with _other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    try:
        # The server's notice and end of stream reach the socket.
        assert select.select([connection.connection.fileno()], [], [], 5)[0]

        assert connection.is_usable() is False
    finally:
        connection.close()


def test_a_request_after_the_server_ended_the_kept_connection_is_served(alice_api):
    connection.close()  # the next connection takes the settings below (as `make serve`'s production ones)
    connection.settings_dict["CONN_HEALTH_CHECKS"] = True
    connection.settings_dict["CONN_MAX_AGE"] = 60
    try:
        assert alice_api.get("/api/v1/tasks").status_code == 200
        pid = connection.connection.info.backend_pid
        with _other_connection() as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        select.select([connection.connection.fileno()], [], [], 5)
        # What a server's request_started does (close_old_connections), which the test client leaves out.
        connection.close_if_unusable_or_obsolete()

        answer = alice_api.get("/api/v1/tasks")

        assert answer.status_code == 200
        assert connection.connection.info.backend_pid != pid
    finally:
        connection.settings_dict["CONN_HEALTH_CHECKS"] = False
        connection.settings_dict["CONN_MAX_AGE"] = 0
        connection.close()
