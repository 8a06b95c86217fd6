"""Count-to-the-limit tests inside one fixed rate-limit window.

The path buckets (core.http.ratelimit, docs/decisions.md#rate-limits) and the login throttle (accounts.throttle,
docs/operations.md#login-throttling) count in fixed windows. A window that ends in the middle of a test
starts the count over, which says nothing of the rule: N requests then the N+1-th would not be refused.
Both windows can be read in advance, so a test pins its run in one of them rather than repeat it:

    with one_window(bucket_window(RULES["default"])):
        ...  # the requests and the assertions that depend on their count

`one_window` waits, when less than `room` seconds are left in a window, until the next one starts (at most
`room` seconds, a window is minutes long), runs the block, and fails if the block still crossed a window's
end: it then took longer than its room, and its counts say nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django_ratelimit.core import _get_window

from accounts.throttle import _window
from core.http.ratelimit import client_key
from core.http.ratelimit_rules import Rule

# Seconds a pinned block may take: a count-to-the-limit run (301 requests through the test client) takes
# under a second alone; this leaves room for a loaded machine and costs on average room²/(2 x period) of
# waiting (0.2 s a test for a minute's window).
ROOM = 5.0

WindowEnd = Callable[[], float]


def bucket_window(rule: Rule, ip: str = "127.0.0.1") -> WindowEnd:
    """When the window of a path bucket with this rule ends for the client `ip` (time.time() seconds).

    django-ratelimit staggers the windows per client key; the window it names `w` (in the counter's key)
    counts every request up to second `w` included, so it ends at `w + 1`, what X-RateLimit-Reset says.
    """
    key = client_key(ip)
    return lambda: _get_window(key, rule.period) + 1


def login_window(rule: Rule) -> WindowEnd:
    """When the window of a login-throttle rule ends (its windows are aligned on the epoch, not staggered)."""
    return lambda: _window(rule, time.time())[1]


@contextmanager
def one_window(*windows: WindowEnd, room: float = ROOM) -> Iterator[None]:
    """Run the block inside one window of each of `windows` (see the module's docstring)."""
    ends = [end() for end in windows]
    while (left := min(ends) - time.time()) < room:
        time.sleep(max(left, 0.0) + 0.01)  # past the nearest end: that counter's next window has the room
        ends = [end() for end in windows]
    started = time.monotonic()

    def crossed() -> str | None:
        if [end() for end in windows] == ends:
            return None
        took = time.monotonic() - started
        return f"the block crossed the end of a rate-limit window: it took {took:.1f} s, its room was {room:.0f} s"

    try:
        yield
    except BaseException as exc:
        if (note := crossed()) is not None:
            exc.add_note(note)
        raise
    note = crossed()
    assert note is None, note
