"""Production refuses the self-settling local payment provider (its public checkout page credits any
top-up for free) unless a demo deployment opts in by name (see docs/operations.md#payments-in-production).
Run as `make serve` runs it: `manage.py check --deploy` with production settings, in a subprocess."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

OPT_IN = "PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION"
CHECK_ID = "payments.E001"


def deploy_check(**environment: str) -> subprocess.CompletedProcess:
    # config.settings.test sets these for itself; production must not inherit them.
    dev_only = {"OUTBOUND_ALLOW_PRIVATE_URLS", "DJANGO_DEBUG", "PAYMENTS_PROVIDER", "STRIPE_API_KEY", OPT_IN}
    env = {
        **{name: value for name, value in os.environ.items() if name not in dev_only},
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


@pytest.mark.parametrize("environment", [{}, {"PAYMENTS_PROVIDER": "local"}, {OPT_IN: "false"}])
def test_production_refuses_the_local_payment_provider(environment):
    result = deploy_check(**environment)

    assert result.returncode != 0
    assert CHECK_ID in result.stderr + result.stdout
    assert OPT_IN in result.stderr + result.stdout  # the error names the way out


def test_production_refuses_stripe_without_its_key():
    result = deploy_check(PAYMENTS_PROVIDER="stripe")

    assert result.returncode != 0
    assert CHECK_ID in result.stderr + result.stdout


def test_a_real_provider_passes():
    result = deploy_check(PAYMENTS_PROVIDER="stripe", STRIPE_API_KEY="sk_test_" + secrets.token_hex(12))

    assert result.returncode == 0, result.stdout + result.stderr
    assert OPT_IN not in result.stderr


def test_the_named_opt_in_lets_a_demo_deployment_start_and_says_so_loudly():
    result = deploy_check(**{OPT_IN: "true"})

    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stderr.splitlines() if '"WARNING"' in line and OPT_IN in line]
    assert warnings, result.stderr
