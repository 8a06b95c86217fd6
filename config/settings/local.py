"""`make run`: one machine, no servers to install. SQLite, local-memory cache, a file broker.

Secrets (Django's secret key, the payments webhook secret, the demo user's password) are generated on
first run into `$VAR_DIR/secrets.env` and kept there; the environment still overrides each. DEBUG is off
and outbound URLs may not point at private addresses unless the environment asks (DJANGO_DEBUG=true,
OUTBOUND_ALLOW_PRIVATE_URLS=true).
"""

from __future__ import annotations

import os
from pathlib import Path

from config.settings.localsecrets import load_or_create

_var_dir = Path(os.environ.get("VAR_DIR") or Path(__file__).resolve().parent.parent.parent / "var").resolve()
_secrets = load_or_create(_var_dir)
os.environ.setdefault("DJANGO_SECRET_KEY", _secrets["DJANGO_SECRET_KEY"])
os.environ.setdefault("PAYMENTS_WEBHOOK_SECRET", _secrets["PAYMENTS_WEBHOOK_SECRET"])


def _running_origin() -> str | None:
    """This server's origin for commands run beside it (`make info`, payments_simulate): PORT (and HOST)
    when given, else what the last `make run` on this VAR_DIR wrote to $VAR_DIR/origin."""
    if os.environ.get("PORT"):
        return f"https://{os.environ.get('HOST') or '127.0.0.1'}:{os.environ['PORT']}"
    try:
        return (_var_dir / "origin").read_text().strip() or None
    except OSError:
        return None


_origin = _running_origin()
if _origin:
    os.environ.setdefault("PUBLIC_BASE_URL", _origin)
    os.environ.setdefault("PAYMENTS_LOCAL_WEBHOOK_URL", f"{_origin}/api/v1/webhooks/payments")

from config.settings.base import *  # noqa: E402, F403
from config.settings.base import CACHES, PUBLIC_BASE_URL, env  # noqa: E402

# The demo user's password (accounts' `ensure_demo_user`), printed by `make run`.
DEMO_USER_PASSWORD = env.str("DEMO_USER_PASSWORD", default=_secrets["DEMO_USER_PASSWORD"])

if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    # The local web server is one multi-threaded process, so a per-process cache is shared by
    # every request it serves. Production always runs on Redis.
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "django_ratelimit.E003"]  # noqa: F405

# Static files are served from STATIC_ROOT with their gzip copies (STORAGES' CompressedStaticFilesStorage),
# which `make run` collects whenever they changed (scripts/static_once.sh); not from the apps' folders, even
# with DJANGO_DEBUG: those have no compressed copies (Swagger UI's bundle would go out as 1.6 MB, not 0.4).
WHITENOISE_USE_FINDERS = False

# Beat's sends of scheduled tasks, and the worker's receipt and success lines for them, are routine: DEBUG,
# not INFO (core/ops/routine_logs.py), so that the terminal keeps `make run`'s banner in view.
LOGGING = {
    **LOGGING,  # noqa: F405
    "filters": {**LOGGING["filters"], "routine_periodic": {"()": "core.ops.routine_logs.RoutinePeriodicToDebug"}},  # noqa: F405
    "loggers": {
        **LOGGING["loggers"],  # noqa: F405
        **{
            name: {"filters": ["routine_periodic"]}
            for name in ("celery.beat", "celery.worker.strategy", "celery.app.trace")
        },
    },
}

# The guide's payout lands on the run after release (docs/guide.md#getting-paid-as-a-seller): no holding
# period on the local provider, whose payments settle at once (docs/payouts.md#the-holding-period).
EARNING_HOLD_DAYS = env.int("EARNING_HOLD_DAYS", default=0)

# E-mail: one file per message under $VAR_DIR/mail/, its path logged at INFO (accounts.mail).
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="accounts.mail.FilePerMessageBackend")
EMAIL_FILE_PATH = str(VAR_DIR / "mail")  # noqa: F405

# The demo agent and the webhook inbox are served by this server (docs/guide.md#the-local-demo): the `demo`
# app, which this profile alone installs (production has no table, route or command of it). Outbound
# calls may reach this one origin on loopback, its self-signed certificate trusted for it alone; every
# other private address stays refused unless OUTBOUND_ALLOW_PRIVATE_URLS=true.
INSTALLED_APPS = [*INSTALLED_APPS, "demo"]  # noqa: F405
DEMO_AGENT_ENABLED = env.bool("DEMO_AGENT_ENABLED", default=True)
DEMO_INBOX_ENABLED = env.bool("DEMO_INBOX_ENABLED", default=True)
if DEMO_AGENT_ENABLED or DEMO_INBOX_ENABLED:
    OUTBOUND_ALLOWED_ORIGINS = [PUBLIC_BASE_URL]
    OUTBOUND_ALLOWED_ORIGINS_CA = str(VAR_DIR / "dev-cert.pem")  # noqa: F405
if DEMO_AGENT_ENABLED:
    # The demo agent bids on open tasks it missed (a new task is bid on at once, demo/signals.py).
    CELERY_BEAT_SCHEDULE = {
        **CELERY_BEAT_SCHEDULE,  # noqa: F405
        "demo.agent_bid": {"task": "demo.tasks.agent_bid", "schedule": 60.0},
    }
