"""Django's PostgreSQL backend with a health check that costs no round trip (docs/decisions.md#running).

With CONN_HEALTH_CHECKS, Django checks a kept connection before the first query of each request with a
`SELECT 1`: a round trip on every request, a tenth of the hottest read's database work. An idle connection
has nothing to read, so the check asks the socket instead (a poll with no wait): a server that closed the
connection (a restart, `pg_terminate_backend`, an idle timeout) has sent its notice or its end of stream,
the socket is readable, and only then does the check send Django's `SELECT 1`, which decides. What the poll
cannot see (a peer gone without a word: a cut network, a host powered off) the ping could not see either
without waiting out a timeout; the first query then fails, answers 503 (core.db.dberrors) and the connection is
closed after the request, as before.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.info.transaction_status != TransactionStatus.IDLE:
            return super().is_usable()
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return super().is_usable() if readable else True
