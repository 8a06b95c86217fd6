"""Production: PostgreSQL, Redis, stateless web processes behind a TLS proxy."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, OUTBOUND_ALLOW_PRIVATE_URLS, REDIS_URL

if DEBUG:  # noqa: F405
    raise ImproperlyConfigured("DJANGO_DEBUG must be off in production.")
if not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL is required in production (cache, rate limits, broker).")
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL in production.")
if OUTBOUND_ALLOW_PRIVATE_URLS:
    raise ImproperlyConfigured("OUTBOUND_ALLOW_PRIVATE_URLS is for local development only.")

LOGGING["handlers"]["console"]["formatter"] = "json"  # noqa: F405  (one JSON object per line)

SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_PRELOAD = True
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
