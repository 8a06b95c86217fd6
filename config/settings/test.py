"""`make test`: real PostgreSQL and Redis, started by scripts/testenv.py (or given in the env)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-not-secret-padded-to-32-bytes-or-more")
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE_URLS", "true")
os.environ.setdefault("PAYMENTS_WEBHOOK_SECRET", "whsec_test_primary,whsec_test_secondary")

# Under pytest-xdist each worker has its own test database (pytest-django suffixes it with the worker id)
# and must have its own Redis database too: every test starts with cache.clear(), a FLUSHDB, and the
# broker tests read their queues. Worker gwN uses database N past the given one; os.environ is changed
# (before base reads it) so the gunicorn and Celery processes a test starts share that worker's Redis.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER.startswith("gw") and os.environ.get("REDIS_URL"):
    from urllib.parse import urlsplit, urlunsplit

    # The processes a test starts inherit both variables: they must land on the same database, not one more.
    _redis = urlsplit(os.environ.setdefault("REDIS_URL_BEFORE_XDIST", os.environ["REDIS_URL"]))
    _redis_db = int(_redis.path.lstrip("/") or 0) + int(_XDIST_WORKER.removeprefix("gw"))
    if _redis_db > 15:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"Redis has databases 0-15: too many xdist workers for {_redis.geturl()}.")
    os.environ["REDIS_URL"] = urlunsplit(_redis._replace(path=f"/{_redis_db}"))
    if os.environ.get("CELERY_BROKER_URL", "").startswith("redis"):
        os.environ["CELERY_BROKER_URL"] = os.environ["REDIS_URL"]

from config.settings.base import *  # noqa: E402, F403 (after the worker's REDIS_URL above)
from config.settings.base import DATABASES, INSTALLED_APPS, REDIS_URL, env  # noqa: E402

if not DATABASES["default"]["ENGINE"].endswith("postgresql") or not REDIS_URL:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("Tests run against PostgreSQL and Redis: run them with `make test`.")

# The local profile's demo app (config/settings/local.py) is tested too; its agent and inbox stay off unless a
# test turns them on (tests/demo/).
INSTALLED_APPS = [*INSTALLED_APPS, "demo"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "test",
    },
    "ratelimit": {"BACKEND": "core.http.ratelimit.RateLimitCounterCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "test"},
}
# Domain tests run tasks in-process; the broker integration test sends to the real Redis broker.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
MEDIA_ROOT = os.environ.get("MEDIA_ROOT", f"/tmp/brandmarket-test-media{_XDIST_WORKER and '-' + _XDIST_WORKER}")  # noqa: S108
# Serve static files (the docs' assets) straight from the apps, without `collectstatic`.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT = None  # nothing is collected in tests; the finders serve the apps' files
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # mail.outbox
# As `make run` (config/settings/local.py): a released earning is paid on the next run; the holding
# period's tests set EARNING_HOLD_DAYS themselves (tests/payments/payouts/test_payout_money.py).
EARNING_HOLD_DAYS = env.int("EARNING_HOLD_DAYS", default=0)
# Tests change what /health checks between calls in one process: no remembered result (tests/core/test_health.py
# turns it on where it tests it).
HEALTH_CHECK_INTERVAL_SECONDS = 0
