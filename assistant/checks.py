"""Deploy checks of the assistant's providers (settings only), registered from AssistantConfig.ready()."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

OPT_IN = "IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION"


@register(deploy=True)
def check_real_image_provider(app_configs=None, **kwargs) -> list[Error]:
    """A deployment sells real images only: the local renderer draws a gradient with the prompt written on
    it, so `check --deploy` (which `make serve` runs before it starts) refuses it as the default model
    unless a demo deployment opts in by name (docs/operations.md#local-stand-ins-in-production)."""
    if settings.IMAGE_PROVIDER == "local" and not settings.IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION:
        return [
            Error(
                "IMAGE_PROVIDER is 'local': the placeholder renderer would be sold for credits.",
                hint=f"Set IMAGE_PROVIDER=openai with OPENAI_API_KEY, or {OPT_IN}=true for a demo deployment.",
                id="assistant.E001",
            )
        ]
    return []
