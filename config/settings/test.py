"""`make test`: real PostgreSQL and Redis, started by scripts/testenv.py (or given in the env)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-not-secret-padded-to-32-bytes-or-more")
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE_URLS", "true")
os.environ.setdefault("PAYMENTS_WEBHOOK_SECRET", "whsec_test_primary,whsec_test_secondary")

from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, REDIS_URL

if not DATABASES["default"]["ENGINE"].endswith("postgresql") or not REDIS_URL:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("Tests run against PostgreSQL and Redis: run them with `make test`.")

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "test",
    },
    "ratelimit": {"BACKEND": "core.ratelimit.RateLimitCounterCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "test"},
}
# Domain tests run tasks in-process; the broker integration test sends to the real Redis broker.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
MEDIA_ROOT = os.environ.get("MEDIA_ROOT", "/tmp/brandmarket-test-media")  # noqa: S108
# Serve static files (the docs' assets) straight from the apps, without `collectstatic`.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT = None  # nothing is collected in tests; the finders serve the apps' files
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # mail.outbox
