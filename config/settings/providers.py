"""External providers: payments, e-mail, images, the language model, scraping and publishing. Each has a
`local` implementation that is real and the default; a real provider is chosen with its key."""

from __future__ import annotations

from config.settings.env import env, env_choice, env_renamed

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
# The fee the local provider keeps when a dispute withdraws a payment's money (major units of the payment's
# currency; Stripe charges one too): `manage.py payments_simulate PAYMENT --dispute needs_response`.
PAYMENTS_LOCAL_DISPUTE_FEE = env.str("PAYMENTS_LOCAL_DISPUTE_FEE", default="15.00")
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
STRIPE_API_KEY = env.str("STRIPE_API_KEY", default="")
STRIPE_API_BASE = env.str("STRIPE_API_BASE", default="https://api.stripe.com")
# Plan name → Stripe price id, e.g. "starter=price_123,growth=price_456".
STRIPE_PRICE_IDS = env.dict("STRIPE_PRICE_IDS", default={})
# Image generation: IMAGE_PROVIDER picks the default image model (the local renderer, or OpenAI's
# when OPENAI_API_KEY is set); LLM_PROVIDER serves the assistant and the free brief/tagline tools.
IMAGE_PROVIDER = env_choice("IMAGE_PROVIDER", ("local", "openai"), "local")
# The local renderer draws a gradient with the prompt written on it: a stand-in, never sold for credits in
# production unless a demo deployment opts in by this name (assistant/checks.py,
# docs/operations.md#local-stand-ins-in-production).
IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION = env.bool("IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", default=False)
# Whether the local image model is offered; production.py offers it only with the opt-in above.
IMAGES_LOCAL_MODEL_OFFERED = True
LLM_PROVIDER = env_choice("LLM_PROVIDER", ("local", "openai"), "local")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="https://api.openai.com/v1")
OPENAI_MODEL = env.str("OPENAI_MODEL", default="gpt-4o-mini")
# Per attempt, all of it (not per read).
OPENAI_TIMEOUT_SECONDS = env_renamed("OPENAI_TIMEOUT_SECONDS", "OPENAI_TIMEOUT", float, 60.0)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=3)  # on 429/5xx and network errors, with backoff
SCRAPER_PROVIDER = env_choice("SCRAPER_PROVIDER", ("local", "brightdata"), "local")
BRIGHTDATA_API_TOKEN = env.str("BRIGHTDATA_API_TOKEN", default="")
BRIGHTDATA_BASE_URL = env.str("BRIGHTDATA_BASE_URL", default="https://api.brightdata.com")

# Publishing creatives (brands): `local` checks the platform rules and records the post on this machine,
# with permalinks under PUBLISHING_LOCAL_PERMALINK_BASE.
PUBLISHING_PROVIDER = env_choice("PUBLISHING_PROVIDER", ("local",), "local")
PUBLISHING_LOCAL_PERMALINK_BASE = env.str("PUBLISHING_LOCAL_PERMALINK_BASE", default="local://published")
# The local publisher posts nowhere (its publications end `simulated`): `check --deploy` refuses it unless a demo
# deployment opts in by this name (brands/checks.py, docs/operations.md#local-stand-ins-in-production).
PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION = env.bool("PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", default=False)
# Connected accounts' platform tokens are encrypted at rest with these Fernet keys (comma-separated, the first
# encrypts, all decrypt: put a new key first, re-encrypt (brands.services.connections.connections_reencrypt),
# then drop the old one).
# Empty: one key derived from DJANGO_SECRET_KEY (docs/operations.md#connected-social-accounts).
CONNECTED_ACCOUNT_TOKEN_KEYS = env.list("CONNECTED_ACCOUNT_TOKEN_KEYS", default=[])
# Publishing through a connected account goes to the platform's API (brands/providers/social.py).
META_GRAPH_BASE_URL = env.str("META_GRAPH_BASE_URL", default="https://graph.facebook.com")
META_GRAPH_VERSION = env.str("META_GRAPH_VERSION", default="v21.0")
LINKEDIN_API_BASE_URL = env.str("LINKEDIN_API_BASE_URL", default="https://api.linkedin.com")
LINKEDIN_API_VERSION = env.str("LINKEDIN_API_VERSION", default="202411")  # the LinkedIn-Version header, YYYYMM
SOCIAL_HTTP_TIMEOUT_SECONDS = env.float("SOCIAL_HTTP_TIMEOUT_SECONDS", default=15.0)
# Connecting accounts (docs/decisions.md#connecting-accounts-oauth): `local` runs the OAuth flow against this server
# (simulated accounts, refused by `check --deploy` unless opted in); `platforms` sends owners to Meta and LinkedIn.
SOCIAL_OAUTH_PROVIDER = env_choice("SOCIAL_OAUTH_PROVIDER", ("local", "platforms"), "local")
SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION = env.bool(
    "SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", default=False
)
# The callback URL registered with both apps; empty: this server's own callback URL, from the request.
SOCIAL_OAUTH_REDIRECT_URI = env.str("SOCIAL_OAUTH_REDIRECT_URI", default="")
SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS = env.int("SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS", default=600)
SOCIAL_OAUTH_LOCAL_TOKEN_LIFETIME_SECONDS = env.int("SOCIAL_OAUTH_LOCAL_TOKEN_LIFETIME_SECONDS", default=60 * 24 * 3600)
META_APP_ID = env.str("META_APP_ID", default="")
META_APP_SECRET = env.str("META_APP_SECRET", default="")
META_OAUTH_DIALOG_URL = env.str("META_OAUTH_DIALOG_URL", default="https://www.facebook.com")
LINKEDIN_CLIENT_ID = env.str("LINKEDIN_CLIENT_ID", default="")
LINKEDIN_CLIENT_SECRET = env.str("LINKEDIN_CLIENT_SECRET", default="")
LINKEDIN_OAUTH_BASE_URL = env.str("LINKEDIN_OAUTH_BASE_URL", default="https://www.linkedin.com")
# Tokens expiring within this window are refreshed by the beat (docs/decisions.md#token-refresh-and-health).
SOCIAL_TOKEN_REFRESH_WINDOW_SECONDS = env.int("SOCIAL_TOKEN_REFRESH_WINDOW_SECONDS", default=7 * 24 * 3600)

# Competitor discovery (brands, docs/operations.md#competitor-discovery): `local` proposes the domains the brand's
# own website links to; `dataforseo` asks DataForSEO Labs for the domains competing with the brand's domain.
SEO_PROVIDER = env_choice("SEO_PROVIDER", ("local", "dataforseo"), "local")
SEO_DISCOVERY_LIMIT = env.int("SEO_DISCOVERY_LIMIT", default=20)  # candidates asked for per run
# The local provider reads one page and guesses: `check --deploy` refuses it unless a demo deployment opts in
# by this name (brands/checks.py, docs/operations.md#local-stand-ins-in-production).
SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION = env.bool("SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", default=False)
DATAFORSEO_LOGIN = env.str("DATAFORSEO_LOGIN", default="")
DATAFORSEO_PASSWORD = env.str("DATAFORSEO_PASSWORD", default="")
DATAFORSEO_BASE_URL = env.str("DATAFORSEO_BASE_URL", default="https://api.dataforseo.com")
DATAFORSEO_LOCATION_CODE = env.int("DATAFORSEO_LOCATION_CODE", default=2840)  # United States
DATAFORSEO_LANGUAGE_CODE = env.str("DATAFORSEO_LANGUAGE_CODE", default="en")
DATAFORSEO_TIMEOUT_SECONDS = env.float("DATAFORSEO_TIMEOUT_SECONDS", default=30.0)  # per attempt, all of it
DATAFORSEO_MAX_ATTEMPTS = env.int("DATAFORSEO_MAX_ATTEMPTS", default=3)  # on 429/40202, 5xx and timeouts
# A Retry-After longer than this is not waited out in the worker: the run fails as retryable instead.
DATAFORSEO_MAX_BACKOFF_SECONDS = env.float("DATAFORSEO_MAX_BACKOFF_SECONDS", default=30.0)
