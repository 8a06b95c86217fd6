"""The products' own knobs: limits, windows and retentions of brands, the marketplace, credits and accounts."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env, env_choice, env_records, env_renamed

# Competitor names across all of one brand's kits (each kit holds at most 1,000): the roster merges
# every one of them on each change (docs/decisions.md, "Competitors").
BRAND_KIT_NAMES_PER_BRAND_MAX = env.int("BRAND_KIT_NAMES_PER_BRAND_MAX", default=2000)
# How long a merged roster stays in the cache; writes make it stale at once (brands.selectors.roster_cache).
COMPETITOR_ROSTER_CACHE_SECONDS = env.int("COMPETITOR_ROSTER_CACHE_SECONDS", default=24 * 3600)

# --- Marketplace ---

# How often the beat runs tasks_market.sweep_deliveries, and how old a pending bid judgement must be before
# that sweep judges it itself (its job was lost, e.g. the broker was down at commit). Both 5 minutes.
DELIVERIES_SWEEP_SECONDS = env.int("DELIVERIES_SWEEP_SECONDS", default=300)
JUDGEMENT_CATCH_UP_AFTER_SECONDS = env.int("JUDGEMENT_CATCH_UP_AFTER_SECONDS", default=300)
# A scraping snapshot still running this long after it was triggered is marked failed by the poller.
SCRAPER_SNAPSHOT_DEADLINE_SECONDS = env_renamed(
    "SCRAPER_SNAPSHOT_DEADLINE_SECONDS", "SCRAPER_SNAPSHOT_DEADLINE", int, 2 * 60 * 60
)
# A task delivery dispatched this long ago without a result counts as stuck: it may be retried
# (POST /api/v1/tasks/{task_id}/delivery/retry) and the beat re-sends it.
DELIVERY_STUCK_AFTER_SECONDS = env_renamed("DELIVERY_STUCK_AFTER_SECONDS", "DELIVERY_STUCK_AFTER", int, 30 * 60)
# An unconfirmed preflight publication expires after this many minutes.
PUBLICATION_PREFLIGHT_MINUTES = env.int("PUBLICATION_PREFLIGHT_MINUTES", default=30)
# A confirmed publication waits this long for a worker (after its scheduled time, when it has one) before it
# is cancelled as expired: long enough that a broker backlog or an outage does not cancel it.
PUBLICATION_QUEUED_HOURS = env.int("PUBLICATION_QUEUED_HOURS", default=24)
# A confirmed publication no worker has taken after this long is queued again (the beat, every minute).
PUBLICATION_REQUEUE_AFTER_SECONDS = env.int("PUBLICATION_REQUEUE_AFTER_SECONDS", default=120)

# --- Credits ---

# Credits a new account is given once its e-mail address is verified (written to its ledger as a grant):
# a few images.
SIGNUP_CREDITS = env.int("SIGNUP_CREDITS", default=10)
if SIGNUP_CREDITS < 0:
    raise ImproperlyConfigured("SIGNUP_CREDITS cannot be negative")
# Credits one assistant message costs when a remote language model answers it (LLM_PROVIDER=openai, which is
# paid per call); the local model is free. Taken before the call, given back if the model fails.
ASSISTANT_MESSAGE_CREDITS = env.int("ASSISTANT_MESSAGE_CREDITS", default=1)
if ASSISTANT_MESSAGE_CREDITS < 0:
    raise ImproperlyConfigured("ASSISTANT_MESSAGE_CREDITS cannot be negative")
# Credit packs on sale (POST /api/v1/allmodelchat/credits/top-up), `id:credits:price:currency`. Parsed here;
# the assistant app, which sells them, refuses packs it cannot sell when it starts (assistant.domain.credit_packs).
CREDIT_PACKS = env_records(
    "CREDIT_PACKS",
    (("id", str), ("credits", int), ("price", Decimal), ("currency", str.lower)),
    default="small:20:5.00:usd,medium:100:20.00:usd,large:500:80.00:usd",
)

# --- Accounts ---

# A reset token is good for this many seconds, once (Django's PasswordResetTokenGenerator).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=60 * 60)
# At most one reset mail per account per this many seconds (a mailbox cannot be flooded through us).
PASSWORD_RESET_MAIL_INTERVAL_SECONDS = env_renamed(
    "PASSWORD_RESET_MAIL_INTERVAL_SECONDS", "PASSWORD_RESET_MAIL_INTERVAL", int, 60
)
# A front-end page that takes the token, e.g. "https://app.example.com/reset#{token}"; empty: the mail
# carries the token and the API call to make.
PASSWORD_RESET_LINK = env.str("PASSWORD_RESET_LINK", default="")
# A verification token is good for this many seconds (3 days, as allauth's default); it verifies the
# address it was mailed to, and only while the account still has that address.
EMAIL_VERIFICATION_TIMEOUT_SECONDS = env_renamed(
    "EMAIL_VERIFICATION_TIMEOUT_SECONDS", "EMAIL_VERIFICATION_TIMEOUT", int, 3 * 24 * 60 * 60
)
# At most one verification mail per account and address per this many seconds.
EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS = env_renamed(
    "EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS", "EMAIL_VERIFICATION_MAIL_INTERVAL", int, 60
)
# A front-end page for the verification mail's link, e.g. "https://app.example.com/verify#{token}"; empty:
# the mail carries the token and the API call to make.
EMAIL_VERIFICATION_LINK = env.str("EMAIL_VERIFICATION_LINK", default="")

# --- Retention ---

# How long the logs pruned by core.prune_logs are kept, in days.
INBOUND_REFUSED_RETENTION_DAYS = env.int("INBOUND_REFUSED_RETENTION_DAYS", default=7)
INBOUND_DELIVERY_RETENTION_DAYS = env.int("INBOUND_DELIVERY_RETENTION_DAYS", default=30)
WEBHOOK_ATTEMPT_RETENTION_DAYS = env.int("WEBHOOK_ATTEMPT_RETENTION_DAYS", default=30)
DISPATCH_ATTEMPT_RETENTION_DAYS = env.int("DISPATCH_ATTEMPT_RETENTION_DAYS", default=30)

# --- Paying sellers (docs/payouts.md) ---


# The platform's share of every released task payment, in percent, and an optional floor in the
# payment's currency (0: none). Computed once per release: payments.fees.fee_split.
def _env_decimal(name: str, default: str, *, lowest: Decimal, highest: Decimal) -> Decimal:
    try:
        value = Decimal(env.str(name, default=default))
    except InvalidOperation:
        raise ImproperlyConfigured(f"{name} must be a decimal number") from None
    if not lowest <= value <= highest:
        raise ImproperlyConfigured(f"{name} must be between {lowest} and {highest}")
    return value


PLATFORM_FEE_PERCENT = _env_decimal("PLATFORM_FEE_PERCENT", "10", lowest=Decimal(0), highest=Decimal(100))
# The fee's minimum (docs/decisions.md#fee-minimum-per-currency): one number for every currency, or pairs per
# currency ("usd=0.50,jpy=50"; a currency not named has none), in the currency's major units.
PLATFORM_FEE_MINIMUM = env.str("PLATFORM_FEE_MINIMUM", default="0")
# The currencies tasks and bids may be in: those the platform's balance at the provider settles in
# (docs/decisions.md#settlement-currencies); empty: every currency the service knows (the local provider).
PAYMENTS_SETTLEMENT_CURRENCIES = env.list("PAYMENTS_SETTLEMENT_CURRENCIES", default=[])
# A delivery submitted this long ago with no approve, revision request or dispute is released by the beat.
REVIEW_WINDOW_HOURS = env.int("REVIEW_WINDOW_HOURS", default=72)
# A released earning stays pending this long, until the payment counts as settled (the local provider;
# with Stripe, set it to the account's payout delay).
PAYOUT_SETTLEMENT_DELAY_SECONDS = env.int("PAYOUT_SETTLEMENT_DELAY_SECONDS", default=0)
# The holding period (docs/payouts.md#the-holding-period): a released earning is paid out no sooner than
# this many days after release (or the settlement delay, if longer), as marketplaces hold money to absorb
# chargebacks. 0 pays on the next run (`make run` sets 0: config/settings/local.py).
EARNING_HOLD_DAYS = env.int("EARNING_HOLD_DAYS", default=7)
# A provider forgets an idempotency key after about a day (Stripe: 24 hours): a create retried from a row
# older than this many hours first looks the object up (docs/payouts.md#retries-after-a-day).
PROVIDER_IDEMPOTENCY_WINDOW_HOURS = env.int("PROVIDER_IDEMPOTENCY_WINDOW_HOURS", default=23)
# A payout account's country when the owner gives none (ISO 3166-1 alpha-2).
PAYOUT_ACCOUNT_DEFAULT_COUNTRY = env.str("PAYOUT_ACCOUNT_DEFAULT_COUNTRY", default="US").upper()
# The payout run pays every owed owner per run, this many owners per batch (docs/payouts.md#jobs).
PAYOUT_BATCH_SIZE = env.int("PAYOUT_BATCH_SIZE", default=500)
# How often available money is paid out: "daily" or "hourly" (the beat entry's period).
PAYOUT_SCHEDULE = env_choice("PAYOUT_SCHEDULE", ("daily", "hourly"), "daily")
# Payments still held for approval (authorised, not captured) are captured once this old, well before a
# card authorisation expires (about 7 days; under 5 for some merchant-initiated ones).
HELD_PAYMENT_CAPTURE_AFTER_HOURS = env.int("HELD_PAYMENT_CAPTURE_AFTER_HOURS", default=72)

# Research audits (brands, docs/decisions.md#audit-sweep): an audit still `queued` this long (or `running` this long
# past CELERY_TASK_TIME_LIMIT) was lost with its message or worker, and the sweep queues it again, at most
# RESEARCH_AUDIT_MAX_ATTEMPTS times in all before it is `failed` with the reason.
RESEARCH_AUDIT_STALE_SECONDS = env.int("RESEARCH_AUDIT_STALE_SECONDS", default=1800)
RESEARCH_AUDIT_MAX_ATTEMPTS = env.int("RESEARCH_AUDIT_MAX_ATTEMPTS", default=3)
