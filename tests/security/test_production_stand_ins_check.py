"""Production refuses the local image renderer and the local publisher, stand-ins that would sell a placeholder
for credits and publish nowhere, unless a demo deployment opts in by name
(docs/operations.md#local-stand-ins-in-production); and without the opt-in it does not offer the local image
model at all. Run as `make serve` runs it: `manage.py check --deploy` with production settings."""

from __future__ import annotations

import pytest

from assistant.domain.image_models import get_model
from tests.support.deploy_check import run_deploy_check
from tests.support.settings_probe import run_probe

ALLOWED = {
    "PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "true",
    "IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "true",
    "PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "true",
    "SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "true",
    "SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "true",
}


@pytest.mark.parametrize(
    ("refused", "check_id"),
    [
        ("IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", "assistant.E001"),
        ("PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", "brands.E001"),
        ("SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", "brands.E002"),
        ("SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION", "brands.E003"),
    ],
)
def test_production_refuses_a_local_stand_in_without_its_opt_in(refused, check_id):
    result = run_deploy_check(**{**ALLOWED, refused: "false"})

    assert result.returncode != 0
    assert check_id in result.stderr + result.stdout
    assert refused in result.stderr + result.stdout  # the error names the way out


def test_with_every_opt_in_a_demo_deployment_starts():
    result = run_deploy_check(**ALLOWED)

    assert result.returncode == 0, result.stdout + result.stderr


def test_a_real_image_provider_needs_no_opt_in_and_production_then_offers_no_local_model():
    environment = {**ALLOWED, "IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION": "false", "IMAGE_PROVIDER": "openai"}
    assert run_deploy_check(OPENAI_API_KEY="sk-test", **environment).returncode == 0

    offered = run_probe(PROBE, "config.settings.production", DJANGO_SECRET_KEY="probe-" + "x" * 50, **environment)

    assert offered == {"local-canvas-1": False, "openai-gpt-image-1": False}  # no key in this probe: unavailable


def test_outside_production_the_local_model_is_offered():
    assert get_model("local-canvas-1").available


PROBE = """
import django, json
django.setup()
from assistant.domain.image_models import IMAGE_MODELS
print(json.dumps({model.identifier: model.available for model in IMAGE_MODELS}))
"""
