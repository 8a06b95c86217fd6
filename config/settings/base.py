"""Settings shared by every environment.

Everything that differs between machines comes from the environment (see `.env.example`);
a malformed value fails at start-up instead of surfacing later as odd behaviour.
"""

from __future__ import annotations

from botocore.config import Config as BotoConfig
from django.core.exceptions import ImproperlyConfigured

from config.settings.api import *  # noqa: F403
from config.settings.celery import *  # noqa: F403
from config.settings.domain import *  # noqa: F403
from config.settings.env import (
    BASE_DIR,
    REDIS_SOCKET_TIMEOUTS,
    REDIS_URL,
    VAR_DIR,
    env,
    env_choice,
    env_networks,
    env_renamed,
)
from config.settings.observability import *  # noqa: F403
from config.settings.providers import *  # noqa: F403

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])

# --- Applications -------------------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_simplejwt.token_blacklist",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "accounts",
    "payments",
    "brands",
    "tasks_market",
    "teams",
    "assistant",
    "webhooks_app",
    "scrapers",
    # `seed_demo` (no models). The local demo agent and webhook inbox, `demo`, are config/settings/local.py's.
    "demo_seed",
]

MIDDLEWARE = [
    *METRICS_MIDDLEWARE,  # noqa: F405  (first: it times everything below; empty when metrics are off)
    # Order matters: every request gets an id (for logs and X-Request-ID), a view that cannot get the
    # database answers 503 (core.db.dberrors) rather than 500, the client's address and
    # scheme are settled, plain HTTP is refused before anything else runs, then the rate limit is
    # counted, then Django proper.
    "core.http.middleware.RequestIdMiddleware",
    "core.http.middleware.PrivateApiResponseMiddleware",
    "core.http.middleware.DatabaseUnavailableMiddleware",
    "core.http.middleware.ClientAddressMiddleware",
    "core.http.middleware.HttpsRequiredMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "core.http.csp.CSPMiddleware",
    "core.http.middleware.RateLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
AUTH_USER_MODEL = "accounts.User"
# The model of API keys (request.auth when a key authenticated): core.api.permissions refuses them by it.
API_KEY_MODEL = "accounts.ApiKey"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Data stores ----------------------------------------------------------------------------

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=0))
# How long a request waits for the database before it is answered 503 (core.db.dberrors): SQLite's busy
# timeout (waiting for the write lock) and PostgreSQL's connect timeout (a restarting server), in seconds.
DATABASE_BUSY_TIMEOUT_SECONDS = env_renamed("DATABASE_BUSY_TIMEOUT_SECONDS", "DATABASE_BUSY_TIMEOUT", int, 20)
DATABASE_CONNECT_TIMEOUT_SECONDS = env_renamed("DATABASE_CONNECT_TIMEOUT_SECONDS", "DATABASE_CONNECT_TIMEOUT", int, 5)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default serves one multi-threaded web process, a worker and beat from one file.
    # WAL: readers never block the writer, nor the writer them. IMMEDIATE: every transaction takes the
    # write lock at BEGIN, so writers queue (up to the busy timeout) instead of failing at once when a
    # reading transaction tries to write; and no two transactions ever interleave, which is what
    # select_for_update() (a no-op on SQLite) gives the same code on PostgreSQL.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
    DATABASES["default"]["OPTIONS"].setdefault("timeout", DATABASE_BUSY_TIMEOUT_SECONDS)
    DATABASES["default"]["OPTIONS"].setdefault("init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Django's backend with a health check that polls the socket instead of a SELECT 1 per request.
    DATABASES["default"]["ENGINE"] = "core.db.backends.postgresql"
    # A server that is restarting or unreachable fails the request (503) instead of hanging it.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT_SECONDS)

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_SOCKET_TIMEOUTS,
        },
        # django-ratelimit's counters, one round trip per request (core.http.ratelimit.RateLimitCounterCache).
        "ratelimit": {
            "BACKEND": "core.http.ratelimit.RateLimitCounterCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_SOCKET_TIMEOUTS,
        },
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "brandmarket"}}

# --- Security ------------------------------------------------------------------------------

TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# A CSRF failure under /api/ answers JSON in the error shape (see docs/decisions.md#errors).
CSRF_FAILURE_VIEW = "core.http.views.csrf_failure"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp), one policy per kind of page: see
# docs/decisions.md#content-security-policy. "'nonce'" stands for the per-request nonce (csp.constants.NONCE).
_SELF, _NONE, _NONCE = "'self'", "'none'", "'nonce'"
_LOCKED = {"default-src": [_NONE], "base-uri": [_NONE], "frame-ancestors": [_NONE], "form-action": [_NONE]}
# Every other HTML page (the admin, error pages): our own static files only, no inline code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        **_LOCKED,
        "script-src": [_SELF],
        "style-src": [_SELF],
        "img-src": [_SELF],
        "connect-src": [_SELF],  # the admin's autocomplete widgets fetch their choices
        "form-action": [_SELF],
    }
}
CSP_PAGE_POLICIES = {
    # JSON answers load nothing and are never framed.
    "api": _LOCKED,
    # Swagger UI: sidecar bundles, the inline start-up script and style by nonce, data: SVG icons and the
    # favicon, the schema by fetch.
    "swagger": {
        **_LOCKED,
        "script-src": [_SELF, _NONCE],
        "style-src": [_SELF, _NONCE],
        "img-src": [_SELF, "data:"],
        "connect-src": [_SELF],
    },
    # ReDoc: its bundle injects <style> elements at run time, draws data: SVG icons and builds its search
    # worker from a blob.
    "redoc": {
        **_LOCKED,
        "script-src": [_SELF],
        "style-src": [_SELF, "'unsafe-inline'"],
        "img-src": ["data:"],
        "connect-src": [_SELF],
        "worker-src": ["blob:"],
    },
    # The guide and the checkout page: server-rendered HTML with one inline <style> (nonce), no script.
    "guide": {**_LOCKED, "style-src": [_NONCE]},
    "checkout": {**_LOCKED, "style-src": [_NONCE], "form-action": [_SELF]},
}
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=1024 * 1024)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Outbound URLs (webhooks, agent endpoints, scraping) may point at private addresses only when
# this is on: local development and tests. Production settings refuse it.
OUTBOUND_ALLOW_PRIVATE_URLS = env.bool("OUTBOUND_ALLOW_PRIVATE_URLS", default=False)
# Total time for one outbound call to a user-given URL, all redirects and the whole body included
# (core/http/outbound.py): pages (scrape-website, website audits, the local scraper) and signed POSTs
# (webhooks, agent dispatch: 15 s, docs/decisions.md#outbound-webhooks-and-agent-dispatch).
OUTBOUND_PAGE_DEADLINE_SECONDS = env.float("OUTBOUND_PAGE_DEADLINE_SECONDS", default=10.0)
OUTBOUND_CALL_DEADLINE_SECONDS = env.float("OUTBOUND_CALL_DEADLINE_SECONDS", default=15.0)
# Resolver for outbound calls: None (the system's getaddrinfo), a callable host -> [IP] or its dotted path.
OUTBOUND_RESOLVER = None
# Exact origins (scheme, host, port) that outbound calls may reach even on a loopback or private address,
# with their certificate checked against OUTBOUND_ALLOWED_ORIGINS_CA as well: only the local profile sets
# them, to this server's own origin, for its demo agent and webhook inbox (docs/guide.md#the-local-demo).
OUTBOUND_ALLOWED_ORIGINS: list[str] = []
OUTBOUND_ALLOWED_ORIGINS_CA = ""
# The demo agent and the webhook inbox (the demo app): the local profile installs that app and turns them on.
DEMO_AGENT_ENABLED = False
DEMO_INBOX_ENABLED = False

# --- Internationalisation and files -----------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_URL = "/media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=str(VAR_DIR / "media"))
# Media (generated images): this node's disk under MEDIA_ROOT by default, or a bucket every node shares on an
# S3-compatible object store (MEDIA_STORAGE=s3). URLs come from the storage (docs/operations.md#media-storage).
MEDIA_STORAGE = env_choice("MEDIA_STORAGE", ("filesystem", "s3"), "filesystem")
MEDIA_S3_BUCKET = env.str("MEDIA_S3_BUCKET", default="")
MEDIA_S3_ENDPOINT_URL = env.str("MEDIA_S3_ENDPOINT_URL", default="")  # empty: AWS itself
MEDIA_S3_PUBLIC_DOMAIN = env.str("MEDIA_S3_PUBLIC_DOMAIN", default="")  # e.g. media.example.com (a CDN): https URLs
MEDIA_S3_SIGNED_URLS = env.bool("MEDIA_S3_SIGNED_URLS", default=False)
MEDIA_S3_SIGNED_URL_SECONDS = env.int("MEDIA_S3_SIGNED_URL_SECONDS", default=3600)
if MEDIA_STORAGE == "s3" and not MEDIA_S3_BUCKET:
    raise ImproperlyConfigured("MEDIA_STORAGE=s3 needs MEDIA_S3_BUCKET.")
_MEDIA_BACKENDS = {
    "filesystem": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "s3": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": MEDIA_S3_BUCKET,
            "endpoint_url": MEDIA_S3_ENDPOINT_URL or None,
            "region_name": env.str("MEDIA_S3_REGION", default="") or None,
            "access_key": env.str("MEDIA_S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("MEDIA_S3_SECRET_ACCESS_KEY", default="") or None,
            "custom_domain": MEDIA_S3_PUBLIC_DOMAIN or None,
            "url_protocol": "https:",
            "querystring_auth": MEDIA_S3_SIGNED_URLS,
            "querystring_expire": MEDIA_S3_SIGNED_URL_SECONDS,
            "file_overwrite": False,  # a name is never reused: generated/<generation id>.png
            # Every call has its deadline: connect 5 s, each read 30 s, 3 attempts in all.
            "client_config": BotoConfig(
                s3={"addressing_style": env_choice("MEDIA_S3_ADDRESSING_STYLE", ("path", "virtual", "auto"), "path")},
                signature_version="s3v4",
                connect_timeout=5,
                read_timeout=30,
                retries={"max_attempts": 3, "mode": "standard"},
            ),
        },
    },
}
STORAGES = {
    "default": _MEDIA_BACKENDS[MEDIA_STORAGE],
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Rate limiting ---------------------------------------------------------------------------------

RATELIMIT_USE_CACHE = "ratelimit" if "ratelimit" in CACHES else "default"
RATELIMIT_CACHE_PREFIX = "rl:"

# --- The local HTTPS server (`manage.py serve_tls`, `make run`; core.ops.tlsserver) ---------------------------
# Seconds a request's line and headers may take from its first byte (and a new connection its first byte
# and TLS handshake), seconds its body may take after them, seconds a kept-alive connection may sit idle,
# and how many connections are served at once (past that: 503 `server_busy`). Whole deadlines, not per
# read (docs/operations.md#the-local-https-server).
SERVE_TLS_HEADER_TIMEOUT_SECONDS = env_renamed(
    "SERVE_TLS_HEADER_TIMEOUT_SECONDS", "SERVE_TLS_HEADER_TIMEOUT", float, 10.0
)
SERVE_TLS_BODY_TIMEOUT_SECONDS = env_renamed("SERVE_TLS_BODY_TIMEOUT_SECONDS", "SERVE_TLS_BODY_TIMEOUT", float, 30.0)
SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS = env_renamed(
    "SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS", "SERVE_TLS_KEEPALIVE_TIMEOUT", float, 5.0
)
SERVE_TLS_MAX_THREADS = env.int("SERVE_TLS_MAX_THREADS", default=64)

# --- Logging -----------------------------------------------------------------------------------------------

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env_choice("LOG_FORMAT", ("plain", "json"), "plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.ops.logging.RequestIdFilter"}},
    "formatters": {
        # Both escape control characters in every line (core.ops.logging; docs/operations.md#logs).
        "plain": {
            "()": "core.ops.logging.PlainFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {"()": "core.ops.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # The local HTTPS server's access log (`make run`): through our formatter, not Django's own
        # handler, whose lines carry the request line raw.
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

SILENCED_SYSTEM_CHECKS = [
    # Django's own RedisCache increments atomically (Redis INCR); django-ratelimit only lists django-redis.
    "django_ratelimit.W001",
]

APPEND_SLASH = False  # nothing is redirected; an unknown path is a 404
