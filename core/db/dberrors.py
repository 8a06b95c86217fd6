"""Database errors that mean "not now" rather than "broken": answered 503 with Retry-After, never 500.

- `database_busy`: the database is there but the request could not get its turn. On SQLite the
  write lock stayed taken past the busy timeout (`database is locked`); on PostgreSQL a deadlock, a
  serialisation failure, a lock or statement timeout.
- `database_unavailable`: the database cannot be reached: PostgreSQL restarting or down (connection
  refused, reset, timed out after DATABASE_CONNECT_TIMEOUT_SECONDS, "the database system is starting up"),
  or a connection that broke mid-request.

Either way the request changed nothing: every service writes inside one transaction, which the
error rolled back. Everything else (a missing table, a bad query) is a bug and stays a 500.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from django.db import utils

try:
    import psycopg
except ImportError:  # pragma: no cover - psycopg is a requirement; SQLite-only setups still work
    psycopg = None


@dataclass(frozen=True)
class Unavailable:
    status_code: int
    code: str
    detail: str
    retry_after: int  # seconds

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}

    def body(self) -> dict[str, str]:
        return {"detail": self.detail, "code": self.code}


BUSY = Unavailable(503, "database_busy", "The database is busy; nothing was changed. Try again shortly.", 2)
UNAVAILABLE = Unavailable(
    503, "database_unavailable", "The database is unavailable; nothing was changed. Try again shortly.", 5
)

# SQLite result codes (the primary code is the low byte of the extended one).
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
_SQLITE_BUSY_MESSAGES = ("database is locked", "database table is locked", "database schema is locked")
# PostgreSQL SQLSTATEs: serialization_failure, deadlock_detected, lock_not_available, query_canceled
# (statement_timeout / lock_timeout).
_PG_BUSY = {"40001", "40P01", "55P03", "57014"}
# too_many_connections, admin_shutdown, crash_shutdown, cannot_connect_now, and class 08 (connection).
_PG_UNAVAILABLE = {"53300", "57P01", "57P02", "57P03"}


def classify(exc: BaseException) -> Unavailable | None:
    """BUSY, UNAVAILABLE, or None when `exc` is not a database that is busy or out of reach.

    `exc` is what Django raises (django.db.utils.*, with the driver's exception as its cause) or a
    driver's own exception.
    """
    driver = exc if _is_driver_error(exc) else exc.__cause__
    if driver is not exc and not isinstance(exc, (utils.OperationalError, utils.InterfaceError)):
        return None
    if isinstance(driver, sqlite3.OperationalError):
        code = getattr(driver, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED):
            return BUSY
        return BUSY if str(driver).startswith(_SQLITE_BUSY_MESSAGES) else None
    if psycopg is not None and isinstance(driver, psycopg.OperationalError):
        sqlstate = driver.sqlstate
        if sqlstate in _PG_BUSY:
            return BUSY
        if sqlstate is None or sqlstate in _PG_UNAVAILABLE or sqlstate.startswith("08"):
            return UNAVAILABLE  # no SQLSTATE: the client could not connect, or lost the connection
        return None
    if (psycopg is not None and isinstance(driver, psycopg.InterfaceError)) or (
        isinstance(exc, utils.InterfaceError) and driver is None
    ):
        return UNAVAILABLE  # the connection is already closed (psycopg's word, or Django's own)
    return None


def _is_driver_error(exc: BaseException | None) -> bool:
    if isinstance(exc, sqlite3.OperationalError):
        return True
    return psycopg is not None and isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))
