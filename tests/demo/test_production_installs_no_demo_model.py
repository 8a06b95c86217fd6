"""Production installs no demo model: the `demo` app (the local demo agent and webhook inbox, its
`InboxMessage` table) is config/settings/local.py's, not the base settings' production builds on, while the
demo data set's `seed_demo` (the `demo_seed` app, no models) is installed everywhere: `make bench` seeds its
production-shaped server with it. Each profile is resolved in a subprocess, as its processes resolve it."""

from __future__ import annotations

from demo.models import InboxMessage
from tests.support.settings_probe import run_probe

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
    "commands": {name: app for name, app in get_commands().items() if "demo" in name or app == "demo"},
}))
"""


def resolve(settings_module: str, **environment: str) -> dict:
    return run_probe(PROBE, settings_module, **environment)


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
        "prepare_run": "demo",
    }
