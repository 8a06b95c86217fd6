"""`make bench`: the production settings, plus the benchmark's own routes (bench/urls.py).

Two differences, both confined to paths under /bench/bare/ that only this URLconf serves:
the rate-limit middleware skips them, and their views run without authentication. Every public
route is served exactly as in production.
"""

from __future__ import annotations

from config.settings.production import *  # noqa: F403
from config.settings.production import MIDDLEWARE

ROOT_URLCONF = "bench.urls"
MIDDLEWARE = [
    "bench.middleware.RateLimitExceptBare" if name == "core.http.middleware.RateLimitMiddleware" else name
    for name in MIDDLEWARE
]
