"""`manage.py check --deploy` as `make serve` runs it: production settings, in a subprocess, without the
variables the test profile sets for itself."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

from django.conf import settings

# config.settings.test sets these for itself (or a test sets them); production must not inherit them.
DEV_ONLY = {
    "OUTBOUND_ALLOW_PRIVATE_URLS",
    "DJANGO_DEBUG",
    "PAYMENTS_PROVIDER",
    "STRIPE_API_KEY",
    "PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
    "IMAGE_PROVIDER",
    "IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
    "PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
    "SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
    "SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
}


def run_deploy_check(**environment: str) -> subprocess.CompletedProcess:
    env = {
        **{name: value for name, value in os.environ.items() if name not in DEV_ONLY},
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        **environment,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
