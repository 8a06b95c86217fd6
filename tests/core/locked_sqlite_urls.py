"""A URLconf whose views write to an SQLite file the test keeps locked: what a busy embedded database
looks like from outside, through the real middleware and exception handlers.

The file is `settings.LOCKED_SQLITE_PATH`; the connection is opened with the embedded default's
options (config/settings/base.py) and a short busy timeout, so the write fails as it does in
`make run` when the write lock stays taken past DATABASE_BUSY_TIMEOUT_SECONDS.
"""

from __future__ import annotations

from django.conf import settings
from django.db.utils import ConnectionHandler
from django.http import HttpResponse
from django.urls import path
from rest_framework.response import Response

from config.urls import urlpatterns as project_urlpatterns
from core.api.views import ApiView
from core.http.access import Access

BUSY_TIMEOUT = 0.2  # seconds


def write_to_locked_file() -> None:
    handler = ConnectionHandler(
        {
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": settings.LOCKED_SQLITE_PATH,
                "OPTIONS": {
                    "transaction_mode": "IMMEDIATE",
                    "timeout": BUSY_TIMEOUT,
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                },
            }
        }
    )
    database = handler["default"]  # a handler of its own: not the project's connection
    try:
        database.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)  # BEGIN IMMEDIATE
        with database.cursor() as cursor:
            cursor.execute("INSERT INTO marks (note) VALUES ('written')")
        database.commit()
    finally:
        database.close()


class LockedWriteView(ApiView):
    access = Access.PUBLIC

    def post(self, request):
        write_to_locked_file()
        return Response({"written": True})


def locked_write_page(request):
    """A view outside DRF (like the admin's)."""
    write_to_locked_file()
    return HttpResponse("written")


urlpatterns = [
    path("api/v1/locked-write", LockedWriteView.as_view()),
    path("locked-write", locked_write_page),
    *project_urlpatterns,
]
