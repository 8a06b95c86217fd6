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

from config.settings.base import *  # noqa: E402, F403
from config.settings.base import CACHES, env  # noqa: E402

# The demo user's password (accounts' `ensure_demo_user`), printed by `make run`.
DEMO_USER_PASSWORD = env.str("DEMO_USER_PASSWORD", default=_secrets["DEMO_USER_PASSWORD"])

if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    # The local web server is one multi-threaded process, so a per-process cache is shared by
    # every request it serves. Production always runs on Redis.
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "django_ratelimit.E003"]  # noqa: F405

# Serve static files straight from the apps: a code change needs no `collectstatic`.
WHITENOISE_USE_FINDERS = True

# E-mail: one file per message under $VAR_DIR/mail/, its path logged at INFO (accounts.mail).
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="accounts.mail.FilePerMessageBackend")
EMAIL_FILE_PATH = str(VAR_DIR / "mail")  # noqa: F405
