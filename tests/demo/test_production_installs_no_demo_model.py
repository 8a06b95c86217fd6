"""Production installs no demo model: the `demo` app (the local demo agent and webhook inbox, its
`InboxMessage` table) is config/settings/local.py's, not the base settings' production builds on, while the
demo data set's `seed_demo` (the `demo_seed` app, no models) is installed everywhere: `make bench` seeds its
production-shaped server with it. Each profile is resolved in a subprocess, as its processes resolve it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from demo.models import InboxMessage

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import django, json
django.setup()
from django.apps import apps
from django.conf import settings
from django.core.management import get_commands
print(json.dumps({
    "installed": list(settings.INSTALLED_APPS),
    "models": sorted(model._meta.label for model in apps.get_models(include_auto_created=True)),
    "tables": sorted(model._meta.db_table for model in apps.get_models(include_auto_created=True)),
    "commands": {name: app for name, app in get_commands().items() if "demo" in name},
}))
"""


def resolve(settings_module: str, **environment: str) -> dict:
    # config.settings.test sets these for itself; production must not inherit them.
    dev_only = {"OUTBOUND_ALLOW_PRIVATE_URLS", "DJANGO_DEBUG", "PUBLIC_BASE_URL", "PAYMENTS_LOCAL_WEBHOOK_URL", "PORT"}
    env = {name: value for name, value in os.environ.items() if name not in dev_only}
    env.update(DJANGO_SETTINGS_MODULE=settings_module, **environment)
    env = {name: value for name, value in env.items() if value}  # "" removes a variable
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_settings_install_no_demo_model():
    production = resolve("config.settings.production", DJANGO_SECRET_KEY="production-probe-" + "x" * 40)

    assert "demo" not in production["installed"]
    assert not [label for label in production["models"] if label.split(".")[0] == "demo"]
    assert InboxMessage._meta.label not in production["models"]
    assert InboxMessage._meta.db_table not in production["tables"]
    # The demo data set is production's too, from the app without models; the local demo's commands are not.
    assert "demo_seed" in production["installed"]
    assert production["commands"] == {"seed_demo": "demo_seed", "ensure_demo_user": "accounts"}


def test_the_local_profile_installs_the_demo_app_and_its_model(tmp_path):
    local = resolve("config.settings.local", VAR_DIR=str(tmp_path), DATABASE_URL="", REDIS_URL="")

    assert {"demo", "demo_seed"} <= set(local["installed"])
    assert InboxMessage._meta.label in local["models"]
    assert local["commands"] == {
        "seed_demo": "demo_seed",
        "ensure_demo_user": "accounts",
        "demo_agent": "demo",
        "demo_info": "demo",
    }
