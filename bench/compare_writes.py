"""Writes beside the FastAPI peer's comparison: `--rate` new open tasks a second (default 20) inserted into the
database `compare.sh` compares on, from the moment both servers answer until its last round, so that both
read the open list while it changes. Each is a copy of the oldest open task, created now (so it is on the first
page), by one INSERT: the kept count's triggers see it as any writer's.

    ../shared/peers/fastapi_tasks/compare.sh --rounds 5 > /tmp/compare.log 2>&1 &
    .venv/bin/python -m bench.compare_writes /tmp/compare.log

It reads compare.sh's log for the PostgreSQL port (scripts/testenv.py's line) and for when to start and stop,
and prints how many it wrote. compare.py's equality check runs while it writes and then differs (the totals
move between the two reads); the rounds are what it measures. bench/RESULTS.md has the run. Not run by
`make test`.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path


def insert_statement(conn) -> str:
    """One INSERT of a copy of the oldest open task, created now (so it is on the first page)."""
    columns = [d.name for d in conn.execute("SELECT * FROM tasks_market_task LIMIT 0").description]
    fresh = {"id": "gen_random_uuid()", "created_at": "now()", "updated_at": "now()"}
    copied = ", ".join(fresh.get(c, f"t.{c}") for c in columns)  # the table's own column names
    oldest = "(SELECT * FROM tasks_market_task WHERE status = 'open' ORDER BY created_at LIMIT 1) t"
    return f"INSERT INTO tasks_market_task ({', '.join(columns)}) SELECT {copied} FROM {oldest}"  # noqa: S608


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="compare.sh's output, as it is written")
    parser.add_argument("--rate", type=float, default=20.0, help="inserts a second")
    args = parser.parse_args()
    import psycopg

    while True:
        text = args.log.read_text() if args.log.exists() else ""
        port = re.search(r"PostgreSQL on 127\.0\.0\.1:(\d+)", text)
        if port and "both answer" in text:
            break
        if "Every round's rows" in text:
            raise SystemExit("compare.sh finished before both servers answered")
        time.sleep(0.5)
    with psycopg.connect(f"postgres://postgres@127.0.0.1:{port.group(1)}/brandmarket", autocommit=True) as conn:
        insert = insert_statement(conn)
        written, started = 0, time.monotonic()
        while "Every round's rows" not in args.log.read_text():
            conn.execute(insert)
            written += 1
            time.sleep(max(0.0, started + written / args.rate - time.monotonic()))
    took = time.monotonic() - started
    print(f"wrote {written} open tasks in {took:.0f} s ({written / took:.1f} a second)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
