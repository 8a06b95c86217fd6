"""Production: PostgreSQL, Redis, stateless web processes behind a TLS proxy."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import (
    DATABASES,
    DEMO_AGENT_ENABLED,
    DEMO_INBOX_ENABLED,
    INSTALLED_APPS,
    OUTBOUND_ALLOW_PRIVATE_URLS,
    OUTBOUND_ALLOWED_ORIGINS,
    REDIS_URL,
)

if DEBUG:  # noqa: F405
    raise ImproperlyConfigured("DJANGO_DEBUG must be off in production.")
if not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL is required in production (cache, rate limits, broker).")
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL in production.")
if OUTBOUND_ALLOW_PRIVATE_URLS:
    raise ImproperlyConfigured("OUTBOUND_ALLOW_PRIVATE_URLS is for local development only.")
if OUTBOUND_ALLOWED_ORIGINS or DEMO_AGENT_ENABLED or DEMO_INBOX_ENABLED or "demo" in INSTALLED_APPS:
    # The `demo` app (its InboxMessage table, routes and commands) is config/settings/local.py's to install.
    raise ImproperlyConfigured("The demo agent, the webhook inbox and their loopback origin are local only.")

# Media URLs are absolute https: an S3 endpoint over plain http is a loopback stand-in's only (the multi-node test's).
if MEDIA_STORAGE == "s3" and MEDIA_S3_ENDPOINT_URL and not MEDIA_S3_PUBLIC_DOMAIN:  # noqa: F405
    _media_endpoint = urlsplit(MEDIA_S3_ENDPOINT_URL)  # noqa: F405
    if _media_endpoint.scheme != "https" and not (_media_endpoint.hostname or "").startswith("127."):
        raise ImproperlyConfigured("MEDIA_S3_ENDPOINT_URL must be https (or set MEDIA_S3_PUBLIC_DOMAIN).")

# The local image renderer is a stand-in: not offered for credits unless a demo deployment opts in.
IMAGES_LOCAL_MODEL_OFFERED = IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION  # noqa: F405

LOGGING["handlers"]["console"]["formatter"] = "json"  # noqa: F405  (one JSON object per line)

SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_PRELOAD = True
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

# Plain HTTP is refused by core.http.middleware.HttpsRequiredMiddleware with 403 `https_required` and never
# redirected (docs/decisions.md#https), so SECURE_SSL_REDIRECT stays off on purpose; behind the TLS proxy the scheme
# comes from X-Forwarded-Proto of TRUSTED_PROXIES only.
SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "security.W008"]  # noqa: F405

# Celery workers and beat log through LOGGING above (JSON), not through Celery's own root handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Rate limiting on every request (docs/decisions.md#rate-limits), with fewer round trips to Redis: the counters' cache
# (CACHES["ratelimit"], base settings) counts a request in one atomic script, and each web process keeps
# the parsed overrides for 10 s (an override saved in the admin applies at once in that process, within
# 10 s in the others). `make bench` measures the difference.
RATELIMIT_OVERRIDES_LOCAL_SECONDS = 10
