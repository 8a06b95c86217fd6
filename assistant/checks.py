"""Deploy checks of the assistant's providers (settings only), registered from AssistantConfig.ready()."""

from __future__ import annotations

from django.core.checks import Error, register

from core.checks import local_provider_refused


@register(deploy=True)
def check_real_image_provider(app_configs=None, **kwargs) -> list[Error]:
    """The local renderer draws a gradient with the prompt written on it: `check --deploy` (which `make serve`
    runs first) refuses it as the default model unless a demo deployment opts in by name."""
    return local_provider_refused(
        provider="IMAGE_PROVIDER",
        opt_in="IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
        why="the placeholder renderer would be sold for credits.",
        instead="Set IMAGE_PROVIDER=openai with OPENAI_API_KEY",
        check_id="assistant.E001",
    )
