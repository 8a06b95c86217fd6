"""Settings shared by every environment.

Everything that differs between machines comes from the environment (see `.env.example`);
a malformed value fails at start-up instead of surfacing later as odd behaviour.
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()

# Everything `make run` writes (database, broker files, certificate, media, generated secrets) lives here.
# VAR_DIR moves it, e.g. for a second server from the same tree (the outside-in tests do that).
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var"))).resolve()


def env_networks(name: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Parse a comma-separated list of CIDRs, failing loudly on a typo."""
    networks = []
    for raw in env.list(name, default=[]):
        try:
            networks.append(ipaddress.ip_network(raw.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {raw!r} is not an IP network") from exc
    return networks


def env_credit_packs(name: str, default: str) -> list[dict]:
    """Credit packs on sale: `id:credits:price:currency` items, comma-separated, e.g. `small:20:5.00:usd`."""
    from decimal import Decimal, InvalidOperation

    packs, seen = [], set()
    for raw in env.list(name, default=default.split(",")):
        try:
            pack_id, credits, price, currency = (part.strip() for part in raw.split(":"))
            pack = {"id": pack_id, "credits": int(credits), "price": Decimal(price), "currency": currency.lower()}
        except (ValueError, InvalidOperation) as exc:
            raise ImproperlyConfigured(f"{name}: {raw!r} is not id:credits:price:currency") from exc
        valid = (
            pack_id.replace("-", "").replace("_", "").isalnum()
            and pack_id not in seen
            and pack["credits"] > 0
            and pack["price"] > 0
            and pack["price"] == pack["price"].quantize(Decimal("0.01"))
            and len(pack["currency"]) == 3
            and pack["currency"].isalpha()
        )
        if not valid:
            raise ImproperlyConfigured(f"{name}: {raw!r} needs a unique id, credits > 0, a price > 0 and a currency")
        seen.add(pack_id)
        packs.append(pack)
    return packs


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.str(name, default=default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


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
    "demo",
]

MIDDLEWARE = [
    # Order matters: every request gets an id (for logs and X-Request-ID), a view that cannot get the
    # database answers 503 (core.dberrors) rather than 500, the client's address and
    # scheme are settled, plain HTTP is refused before anything else runs, then the rate limit is
    # counted, then Django proper.
    "core.middleware.RequestIdMiddleware",
    "core.middleware.DatabaseUnavailableMiddleware",
    "core.middleware.ClientAddressMiddleware",
    "core.middleware.HttpsRequiredMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.RateLimitMiddleware",
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
# How long a request waits for the database before it is answered 503 (core.dberrors): SQLite's busy
# timeout (waiting for the write lock) and PostgreSQL's connect timeout (a restarting server), in seconds.
DATABASE_BUSY_TIMEOUT = env.int("DATABASE_BUSY_TIMEOUT", default=20)
DATABASE_CONNECT_TIMEOUT = env.int("DATABASE_CONNECT_TIMEOUT", default=5)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default serves one multi-threaded web process, a worker and beat from one file.
    # WAL: readers never block the writer, nor the writer them. IMMEDIATE: every transaction takes the
    # write lock at BEGIN, so writers queue (up to the busy timeout) instead of failing at once when a
    # reading transaction tries to write; and no two transactions ever interleave, which is what
    # select_for_update() (a no-op on SQLite) gives the same code on PostgreSQL.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
    DATABASES["default"]["OPTIONS"].setdefault("timeout", DATABASE_BUSY_TIMEOUT)
    DATABASES["default"]["OPTIONS"].setdefault("init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # A server that is restarting or unreachable fails the request (503) instead of hanging it.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT)

REDIS_URL = env.str("REDIS_URL", default="")

# A Redis that is down or unreachable must cost a request milliseconds, not the operating system's TCP
# timeouts: connecting and each call are bounded (README, "Operations: when Redis is down").
REDIS_SOCKET_TIMEOUTS = {"socket_connect_timeout": 1, "socket_timeout": 2}

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_SOCKET_TIMEOUTS,
        },
        # django-ratelimit's counters, one round trip per request (core.ratelimit.RateLimitCounterCache).
        "ratelimit": {
            "BACKEND": "core.ratelimit.RateLimitCounterCache",
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
CSRF_FAILURE_VIEW = "core.views.csrf_failure"
X_FRAME_OPTIONS = "DENY"
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
# (core/outbound.py): pages (scrape-website, website audits, the local scraper) and signed POSTs
# (webhooks, agent dispatch; CONTRACT §10 says 15 s).
OUTBOUND_PAGE_DEADLINE_SECONDS = env.float("OUTBOUND_PAGE_DEADLINE_SECONDS", default=10.0)
OUTBOUND_CALL_DEADLINE_SECONDS = env.float("OUTBOUND_CALL_DEADLINE_SECONDS", default=15.0)
# Resolver for outbound calls: None (the system's getaddrinfo), a callable host -> [IP] or its dotted path.
OUTBOUND_RESOLVER = None

# --- Internationalisation and files -----------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_URL = "/media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=str(VAR_DIR / "media"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- API ----------------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=env.int("JWT_ACCESS_MINUTES", default=15)),
    "REFRESH_TOKEN_LIFETIME": timedelta(days=env.int("JWT_REFRESH_DAYS", default=7)),
    "ROTATE_REFRESH_TOKENS": True,
    "BLACKLIST_AFTER_ROTATION": True,
    "UPDATE_LAST_LOGIN": False,
    "USER_ID_FIELD": "id",
    "USER_ID_CLAIM": "user_id",
    "SIGNING_KEY": env.str("JWT_SIGNING_KEY", default=SECRET_KEY),
    "AUTH_HEADER_TYPES": ("Bearer",),
    # Every token carries a hash of the password hash; a password change ends every access token at once
    # (accounts.authentication) and every refresh token too (see docs/decisions.md#identity-and-authentication).
    "CHECK_REVOKE_TOKEN": True,
    "REVOKE_TOKEN_CLAIM": "hash_password",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Brand Marketing and Task Platform API",
    "DESCRIPTION": (
        "Marketing backend and AI-agent task marketplace. Every operation except the public ones "
        "(`security: []`) takes `Authorization: Bearer <token>`, where the token is either a JWT from "
        "`POST /api/v1/auth/token` or an API key (`bmk_...`) on the operations that accept keys. "
        "Validation errors are 422 with a Pydantic-style `detail` list; every other error is "
        '`{"detail": "...", "code": "..."}`. Requests are rate limited per client IP and path prefix; '
        "see the `X-RateLimit-*` headers. JSON strings may not contain U+0000 (refused as `json_invalid`). "
        "The guide to the flows and the rules behind them is at [/docs/guide](/docs/guide)."
    ),
    "VERSION": "0.1.0",
    "OAS_VERSION": "3.1.0",
    # The contact's URL (this server's /docs/guide) and `servers` (the request's own origin) are filled in
    # per request by core.api.schema.add_servers_and_contact.
    "CONTACT": {"name": "Brand Marketing and Task Platform: API guide"},
    # Every tag an operation uses, in the order Swagger UI shows them (tests/test_openapi.py checks both ways).
    "TAGS": [
        {"name": "auth", "description": "Registration, JWTs (token, refresh) and API keys."},
        {"name": "brands", "description": "Brands, the root of competitors, research, intelligence and publications."},
        {"name": "competitors", "description": "A brand's competitor roster: discovered rows merged with kit names."},
        {"name": "brand intelligence", "description": "Tracked groups of advertisers across modules, and artifacts."},
        {"name": "brand kits", "description": "Brand kits, and linking a kit to a team (starts the brand audits)."},
        {
            "name": "publications",
            "description": "Publishing creatives to social platforms.",
        },
        {"name": "ads", "description": "The ad-spend simulator."},
        {"name": "assistant", "description": "The assistant's conversation and its history."},
        {"name": "allmodelchat", "description": "Image generation paid with credits; credit packs and the ledger."},
        {"name": "teams", "description": "Agent teams on a paid subscription."},
        {"name": "tasks", "description": "The task marketplace: post, list, cancel, remix tasks."},
        {"name": "bids", "description": "Bids on tasks, their judge scores and artefacts; selecting starts payment."},
        {"name": "deliveries", "description": "The winning agent's delivery: dispatch, submit, review, retry."},
        {"name": "agents", "description": "Agents that bid on tasks: endpoint, signing secret, benchmarks."},
        {"name": "webhooks", "description": "Outbound webhook subscriptions, and the inbound payments webhook."},
        {"name": "free tools", "description": "Public brief, tagline and website tools (rate limited per hour)."},
        {"name": "admin scrapers", "description": "Staff only: snapshot jobs at the scraping provider."},
        {"name": "ops", "description": "Health of the service and its dependencies."},
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # validatorUrl: Swagger UI would otherwise send the schema to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "displayOperationId": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "PATH_CONVERTER_OVERRIDES": {"uid": {"type": "string", "format": "uuid"}},
    # One schema name per shared choice set (a field and its list form would otherwise get two).
    "ENUM_NAME_OVERRIDES": {
        "CampaignObjectiveEnum": "assistant.domain.catalogue.OBJECTIVE_CHOICES",
        "CampaignChannelEnum": "assistant.domain.catalogue.CHANNEL_CHOICES",
        "AttachmentTypeEnum": "assistant.domain.catalogue.ATTACHMENT_TYPES",
        "ImageProviderEnum": "assistant.domain.catalogue.IMAGE_PROVIDERS",
        "SnapshotStatusEnum": "scrapers.models.SnapshotStatus",
        "ScraperProviderEnum": "scrapers.providers.PROVIDERS",
        "ResearchModuleEnum": "brands.models.brand.ResearchModule",
        "TaskStatusEnum": "tasks_market.models.market.TaskStatus",
        "TaskCategoryEnum": "tasks_market.models.market.TaskCategory",
        "CurrencyEnum": "tasks_market.models.market.CURRENCIES",
        "JudgeCriterionEnum": "tasks_market.services.judging.CRITERIA",
        "PreviewKindEnum": "brands.api.serializers.publications.PREVIEW_KINDS",
        "CreditTransactionKindEnum": "assistant.models.CreditTransaction.Kind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.mark_public_operations",
        "core.api.schema.add_servers_and_contact",
    ],
}

# --- Brands ------------------------------------------------------------------------------------------

# Competitor names across all of one brand's kits (each kit holds at most 1,000): the roster merges
# every one of them on each change (docs/decisions.md, "Competitors").
BRAND_KIT_NAMES_PER_BRAND_MAX = env.int("BRAND_KIT_NAMES_PER_BRAND_MAX", default=2000)
# How long a merged roster stays in the cache; writes make it stale at once (brands.selectors.roster_cache).
COMPETITOR_ROSTER_CACHE_SECONDS = env.int("COMPETITOR_ROSTER_CACHE_SECONDS", default=24 * 3600)

# --- Rate limiting ---------------------------------------------------------------------------------

RATELIMIT_USE_CACHE = "ratelimit" if "ratelimit" in CACHES else "default"
RATELIMIT_CACHE_PREFIX = "rl:"

# --- Background work ---------------------------------------------------------------------------------

# The embedded default (`make run`, no REDIS_URL): kombu's SQLAlchemy transport on a SQLite file under
# VAR_DIR. A message is one row written in one transaction, so a reader never sees half of it (the
# filesystem transport's files could be read before they were filled; docs/decisions.md, "Embedded broker").
EMBEDDED_BROKER_URL = f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or REDIS_URL or EMBEDDED_BROKER_URL
if CELERY_BROKER_URL.startswith(("sqla+", "sqlalchemy+")):
    # Publishers (web, beat) and the consumer share the file: wait for its lock rather than fail at once.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"connect_args": {"timeout": 30}}
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, **REDIS_SOCKET_TIMEOUTS}
# The worker's remote-control mailbox (pidbox) and events need a fanout exchange, which the SQLAlchemy
# transport lacks; nothing here uses them, and without them the worker writes nothing outside VAR_DIR.
CELERY_WORKER_ENABLE_REMOTE_CONTROL = not CELERY_BROKER_URL.startswith(("sqla+", "sqlalchemy+"))
# Publishing (e.g. a job queued on commit) while the broker is down: two quick retries, about one second
# in all, then the error goes to the caller, which logs it; the beat's sweeps queue the work again
# (README, "Operations: when Redis is down"). Celery's default would retry for longer on every request.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.25, "interval_max": 0.5}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only after it ran, and a worker that dies mid-task hands it back:
# tasks are written to be safe to run twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# How often the beat runs tasks_market.sweep_deliveries, and how old a pending bid judgement must be before
# that sweep judges it itself (its job was lost, e.g. the broker was down at commit). Both 5 minutes.
DELIVERIES_SWEEP_SECONDS = env.int("DELIVERIES_SWEEP_SECONDS", default=300)
JUDGEMENT_CATCH_UP_AFTER_SECONDS = env.int("JUDGEMENT_CATCH_UP_AFTER_SECONDS", default=300)
CELERY_BEAT_SCHEDULE = {
    # Refresh tokens are blacklisted on every rotation; expired ones are dead weight. Daily is plenty.
    "accounts.flush_expired_tokens": {
        "task": "accounts.tasks.flush_expired_tokens",
        "schedule": timedelta(hours=24),
    },
    # Teams whose billing period ended after an unsubscribe become cancelled. Hourly is fine-grained
    # enough for billing periods of a month; each team is claimed by a conditional UPDATE.
    "teams.cancel_ended_subscriptions": {
        "task": "teams.tasks.cancel_ended_subscriptions",
        "schedule": timedelta(hours=1),
    },
    # Outbound webhook retries ride on countdown messages; a lost message or a worker that died
    # mid-attempt would strand a delivery. Every minute, overdue and stuck deliveries are queued again.
    "webhooks_app.sweep_webhook_deliveries": {
        "task": "webhooks_app.tasks.sweep_webhook_deliveries",
        "schedule": timedelta(minutes=1),
    },
    # An image generation whose web process died mid-call stays pending with its credits taken;
    # after 15 minutes it is failed and refunded. Every 10 minutes keeps the wait short and cheap.
    "assistant.refund_stale_image_generations": {
        "task": "assistant.tasks.refund_stale_image_generations",
        "schedule": timedelta(minutes=10),
    },
    # Running scraping snapshots are polled at their provider, each on its own backoff (next_poll_at:
    # 10 s doubling to 5 min) until ready, failed or past SCRAPER_SNAPSHOT_DEADLINE. The beat only
    # finds the due ones (one indexed query), so every 10 s is cheap and keeps new snapshots current.
    "scrapers.poll_snapshots": {
        "task": "scrapers.tasks.poll_snapshots",
        "schedule": timedelta(seconds=10),
    },
    # A preflight publication lives PUBLICATION_PREFLIGHT_MINUTES (30); cancelling the expired ones
    # every minute keeps `status` truthful within a minute of `expires_at`. Idempotent.
    "brands.expire_preflights": {
        "task": "brands.tasks.expire_preflights",
        "schedule": timedelta(minutes=1),
    },
    # Confirmed publications whose message was lost (or never sent: the broker was down) are queued
    # again after PUBLICATION_REQUEUE_AFTER_SECONDS. Duplicate runs are no-ops.
    "brands.requeue_publications": {
        "task": "brands.tasks.requeue_publications",
        "schedule": timedelta(minutes=1),
    },
    # Task deliveries: gives back claims of workers that died mid-dispatch, re-queues dispatches whose
    # message was lost, and re-sends dispatches stuck past DELIVERY_STUCK_AFTER (each at most 3 times).
    # It also judges bids whose judge job was lost. Every 5 minutes is well inside the 30-minute stuck
    # window; each step claims or is idempotent, so overlapping runs are safe.
    "tasks_market.sweep_deliveries": {
        "task": "tasks_market.tasks.sweep_deliveries",
        "schedule": timedelta(seconds=DELIVERIES_SWEEP_SECONDS),
    },
    # Logs that grow with traffic (inbound webhook deliveries, refused ones above all, outbound webhook
    # attempts, agent dispatch attempts) would otherwise grow without bound: anyone may POST to the
    # public webhook. Hourly keeps each batch small; the retentions below say how long rows live.
    "core.prune_logs": {
        "task": "core.tasks.prune_logs",
        "schedule": timedelta(hours=1),
    },
    # Idempotency-Key records live 24 h (core.idempotency); lookups ignore expired ones, so this only
    # keeps the table small. Hourly deletes at most an hour's worth of keys in one indexed DELETE.
    "core.prune_idempotency_keys": {
        "task": "core.tasks.prune_idempotency_keys",
        "schedule": timedelta(hours=1),
    },
}
# How long the logs pruned by core.prune_logs are kept, in days.
INBOUND_REFUSED_RETENTION_DAYS = env.int("INBOUND_REFUSED_RETENTION_DAYS", default=7)
INBOUND_DELIVERY_RETENTION_DAYS = env.int("INBOUND_DELIVERY_RETENTION_DAYS", default=30)
WEBHOOK_ATTEMPT_RETENTION_DAYS = env.int("WEBHOOK_ATTEMPT_RETENTION_DAYS", default=30)
DISPATCH_ATTEMPT_RETENTION_DAYS = env.int("DISPATCH_ATTEMPT_RETENTION_DAYS", default=30)

# --- The local HTTPS server (`manage.py serve_tls`, `make run`; core.tlsserver) ---------------------------
# Seconds a request's line and headers may take from its first byte (and a new connection its first byte
# and TLS handshake), seconds its body may take after them, seconds a kept-alive connection may sit idle,
# and how many connections are served at once (past that: 503 `server_busy`). Whole deadlines, not per
# read (docs/operations.md#the-local-https-server).
SERVE_TLS_HEADER_TIMEOUT = env.float("SERVE_TLS_HEADER_TIMEOUT", default=10.0)
SERVE_TLS_BODY_TIMEOUT = env.float("SERVE_TLS_BODY_TIMEOUT", default=30.0)
SERVE_TLS_KEEPALIVE_TIMEOUT = env.float("SERVE_TLS_KEEPALIVE_TIMEOUT", default=5.0)
SERVE_TLS_MAX_THREADS = env.int("SERVE_TLS_MAX_THREADS", default=64)

# --- Providers --------------------------------------------------------------------------------------------

PAYMENTS_PROVIDER = env_choice("PAYMENTS_PROVIDER", ("local", "stripe"), "local")
# `manage.py check --deploy` (run by `make serve`) refuses the local provider, which settles payments
# itself, unless a demo deployment opts in by this name; each process then logs a WARNING on start
# (payments/checks.py, docs/operations.md#payments-in-production).
PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION = env.bool("PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", default=False)
PAYMENTS_WEBHOOK_SECRET = env.list("PAYMENTS_WEBHOOK_SECRET", default=[])
# Where the local payment provider sends its signed events (`manage.py payments_simulate`): our own webhook.
PAYMENTS_LOCAL_WEBHOOK_URL = env.str(
    "PAYMENTS_LOCAL_WEBHOOK_URL", default="https://127.0.0.1:8443/api/v1/webhooks/payments"
)
# This server's public origin: the local provider's checkout pages (`/checkout/{session}`) are linked from
# it, and Stripe Checkout sends the payer back to it when the API caller gave no success/cancel URL.
PUBLIC_BASE_URL = env.str("PUBLIC_BASE_URL", default="https://127.0.0.1:8443").rstrip("/")

# --- E-mail and password reset (accounts) ---------------------------------------------------------------
# EMAIL_URL (django-environ: smtp://user:pass@host:587, smtp+ssl://..., consolemail://) or the EMAIL_HOST,
# EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS variables; a provider's HTTP API through
# django-anymail (see docs/operations.md#e-mail). `make run` writes mail to files (config/settings/local.py).
if env.str("EMAIL_URL", default=""):
    vars().update(env.email_url("EMAIL_URL"))
else:
    EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
    EMAIL_PORT = env.int("EMAIL_PORT", default=25)
    EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
    EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
    EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
    EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="no-reply@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# A reset token is good for this many seconds, once (Django's PasswordResetTokenGenerator).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=60 * 60)
# At most one reset mail per account per this many seconds (a mailbox cannot be flooded through us).
PASSWORD_RESET_MAIL_INTERVAL = env.int("PASSWORD_RESET_MAIL_INTERVAL", default=60)
# A front-end page that takes the token, e.g. "https://app.example.com/reset#{token}"; empty: the mail
# carries the token and the API call to make.
PASSWORD_RESET_LINK = env.str("PASSWORD_RESET_LINK", default="")

STRIPE_API_KEY = env.str("STRIPE_API_KEY", default="")
STRIPE_API_BASE = env.str("STRIPE_API_BASE", default="https://api.stripe.com")
# Plan name → Stripe price id, e.g. "starter=price_123,growth=price_456".
STRIPE_PRICE_IDS = env.dict("STRIPE_PRICE_IDS", default={})
# Image generation: IMAGE_PROVIDER picks the default image model (the local renderer, or OpenAI's
# when OPENAI_API_KEY is set); LLM_PROVIDER serves the assistant and the free brief/tagline tools.
IMAGE_PROVIDER = env_choice("IMAGE_PROVIDER", ("local", "openai"), "local")
LLM_PROVIDER = env_choice("LLM_PROVIDER", ("local", "openai"), "local")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
# Credits a new account is given on registration (written to its ledger as a grant): a few images.
SIGNUP_CREDITS = env.int("SIGNUP_CREDITS", default=10)
if SIGNUP_CREDITS < 0:
    raise ImproperlyConfigured("SIGNUP_CREDITS cannot be negative")
# Credit packs on sale (POST /api/v1/allmodelchat/credits/top-up), `id:credits:price:currency`.
CREDIT_PACKS = env_credit_packs("CREDIT_PACKS", "small:20:5.00:usd,medium:100:20.00:usd,large:500:80.00:usd")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="https://api.openai.com/v1")
OPENAI_MODEL = env.str("OPENAI_MODEL", default="gpt-4o-mini")
OPENAI_TIMEOUT = env.float("OPENAI_TIMEOUT", default=60.0)  # seconds per attempt, all of it (not per read)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=3)  # on 429/5xx and network errors, with backoff
SCRAPER_PROVIDER = env_choice("SCRAPER_PROVIDER", ("local", "brightdata"), "local")
BRIGHTDATA_API_TOKEN = env.str("BRIGHTDATA_API_TOKEN", default="")
BRIGHTDATA_BASE_URL = env.str("BRIGHTDATA_BASE_URL", default="https://api.brightdata.com")
# A scraping snapshot still running this long after it was triggered is marked failed by the poller.
SCRAPER_SNAPSHOT_DEADLINE = timedelta(seconds=env.int("SCRAPER_SNAPSHOT_DEADLINE", default=2 * 60 * 60))
# A task delivery dispatched this long ago without a result counts as stuck: it may be retried
# (POST /api/v1/tasks/{task_id}/delivery/retry) and the beat re-sends it.
DELIVERY_STUCK_AFTER = timedelta(seconds=env.int("DELIVERY_STUCK_AFTER", default=30 * 60))
# Publishing creatives (brands): `local` checks the platform rules and records the post on this machine,
# with permalinks under PUBLISHING_LOCAL_PERMALINK_BASE. An unconfirmed preflight expires after N minutes.
PUBLISHING_PROVIDER = env_choice("PUBLISHING_PROVIDER", ("local",), "local")
PUBLISHING_LOCAL_PERMALINK_BASE = env.str("PUBLISHING_LOCAL_PERMALINK_BASE", default="local://published")
PUBLICATION_PREFLIGHT_MINUTES = env.int("PUBLICATION_PREFLIGHT_MINUTES", default=30)
# A confirmed publication no worker has taken after this long is queued again (the beat, every minute).
PUBLICATION_REQUEUE_AFTER_SECONDS = env.int("PUBLICATION_REQUEUE_AFTER_SECONDS", default=120)

# --- Logging -----------------------------------------------------------------------------------------------

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env_choice("LOG_FORMAT", ("plain", "json"), "plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.logging.RequestIdFilter"}},
    "formatters": {
        # Both escape control characters in every line (core.logging; docs/operations.md#logs).
        "plain": {
            "()": "core.logging.PlainFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {"()": "core.logging.JsonFormatter"},
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
