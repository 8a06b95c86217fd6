"""Many threads writing to the embedded default's SQLite at once, as `make run`'s threaded server does.

    DJANGO_SETTINGS_MODULE=config.settings.local VAR_DIR=<dir> python -m tests.core.sqlite_writers [deferred]

Each transaction reads a counter, waits a moment, then writes it back plus one (the shape of a
check-then-act service). Prints one JSON line: the connection's options and pragmas, how many
transactions failed with "database is locked", and the counter at the end. `deferred` runs the same
with SQLite's default transaction mode instead of the settings' IMMEDIATE, to show what it prevents.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import django

THREADS, ROUNDS = 12, 15


def main() -> None:
    django.setup()
    from django.db import OperationalError, connection, transaction

    if sys.argv[1:] == ["deferred"]:
        connection.settings_dict["OPTIONS"]["transaction_mode"] = None
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        cursor.execute("INSERT OR REPLACE INTO counter (id, n) VALUES (1, 0)")
        pragmas = {name: cursor.execute(f"PRAGMA {name}").fetchone()[0] for name in ("journal_mode", "synchronous")}
    connection.close()
    failures: list[str] = []
    start = threading.Barrier(THREADS)

    def writer() -> None:
        start.wait()
        for _ in range(ROUNDS):
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute("SELECT n FROM counter WHERE id = 1")
                    n = cursor.fetchone()[0]
                    time.sleep(0.002)
                    cursor.execute("UPDATE counter SET n = %s WHERE id = 1", [n + 1])
            except OperationalError as exc:
                failures.append(str(exc))
        connection.close()

    threads = [threading.Thread(target=writer) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with connection.cursor() as cursor:
        cursor.execute("SELECT n FROM counter WHERE id = 1")
        final = cursor.fetchone()[0]
    options = {k: v for k, v in connection.settings_dict["OPTIONS"].items()}
    print(json.dumps({"options": options, "pragmas": pragmas, "failures": failures, "counter": final}))


if __name__ == "__main__":
    main()
