"""`make run`'s local profile has no secrets from the repository, DEBUG off, no private
outbound URLs by default, and a demo user that is staff but not a superuser."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from accounts.models import User

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.SECRET_KEY, s.PAYMENTS_WEBHOOK_SECRET, s.DEMO_USER_PASSWORD, s.DEBUG, "
    "s.OUTBOUND_ALLOW_PRIVATE_URLS]))"
)
KNOWN = {"local-development-only-not-secret-padded-to-32-bytes", "whsec_local_development", "demo-password-123"}


def start_local_settings(var_dir: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SECRET_KEY", "PAYMENTS_WEBHOOK_SECRET"}}
    for name in ("DJANGO_DEBUG", "OUTBOUND_ALLOW_PRIVATE_URLS", "DEMO_USER_PASSWORD", "DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(var_dir))
    return subprocess.Popen([sys.executable, "-c", PROBE], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def read_all(processes) -> list[list]:
    outputs = []
    for process in processes:
        out, _ = process.communicate(timeout=60)
        assert process.returncode == 0
        outputs.append(json.loads(out))
    return outputs


def test_local_secrets_are_generated_once_kept_private_and_shared_by_concurrent_processes(tmp_path):
    # web, worker and beat import the settings at the same moment on the first run
    first = read_all([start_local_settings(tmp_path) for _ in range(4)])
    again = read_all([start_local_settings(tmp_path)])

    secret_key, webhook_secrets, demo_password, debug, private_urls = first[0]
    assert all(values == first[0] for values in first + again)
    assert KNOWN.isdisjoint({secret_key, *webhook_secrets, demo_password})
    assert len(secret_key) >= 50 and len(demo_password) >= 16
    assert (debug, private_urls) == (False, False)
    assert stat.S_IMODE((tmp_path / "secrets.env").stat().st_mode) == 0o600
    assert list(tmp_path.glob(".secrets-*")) == []  # no temporary files left behind


@pytest.mark.django_db
def test_the_demo_user_is_staff_with_admin_permissions_but_not_a_superuser(settings, api):
    settings.DEMO_USER_PASSWORD = "a-generated-demo-password"
    out = StringIO()
    call_command("ensure_demo_user", stdout=out)

    user = User.objects.get(email="demo@example.com")
    assert (user.is_staff, user.is_superuser) == (True, False)
    assert "Password:   a-generated-demo-password" in out.getvalue()
    assert user.check_password("a-generated-demo-password")
    assert user.has_perm("webhooks_app.change_webhooksubscription")
    assert user.has_perm("accounts.view_user") and not user.has_perm("accounts.change_user")
    api.force_login(user)
    assert api.get("/admin/webhooks_app/inbounddelivery/").status_code == 200


@pytest.mark.django_db
def test_an_older_superuser_demo_user_is_brought_in_line(settings):
    User.objects.create_user("demo@example.com", "demo-password-123", is_staff=True, is_superuser=True)
    settings.DEMO_USER_PASSWORD = "a-generated-demo-password"

    call_command("ensure_demo_user", stdout=StringIO())

    user = User.objects.get(email="demo@example.com")
    assert (user.is_superuser, user.check_password("demo-password-123")) == (False, False)
