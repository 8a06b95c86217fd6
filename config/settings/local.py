"""`make run`: one machine, no servers to install. SQLite, local-memory cache, a file broker."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "local-development-only-not-secret-padded-to-32-bytes")
os.environ.setdefault("DJANGO_DEBUG", "true")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE_URLS", "true")
os.environ.setdefault("PAYMENTS_WEBHOOK_SECRET", "whsec_local_development")

from config.settings.base import *  # noqa: F403
from config.settings.base import CACHES

if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    # The local web server is one multi-threaded process, so a per-process cache is shared by
    # every request it serves. Production always runs on Redis.
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "django_ratelimit.E003"]  # noqa: F405

# Serve static files straight from the apps: a code change needs no `collectstatic`.
WHITENOISE_USE_FINDERS = True
