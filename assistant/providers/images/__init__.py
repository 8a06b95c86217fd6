"""Image generation behind one small interface: `provider.generate(prompt=..., model=...)` → PNG bytes.

`local` draws the picture here with Pillow; `openai` calls an OpenAI-compatible images API. Which
model uses which provider is the registry's business (assistant/domain/image_models.py).
"""

from __future__ import annotations

from django.conf import settings

from assistant.providers.images.base import BrandStyle, GeneratedImage, ImageProvider
from assistant.providers.images.local import LocalCanvas
from assistant.providers.images.openai import OpenAIImages
from core.http.errors import ProviderUnavailable

__all__ = ["BrandStyle", "GeneratedImage", "ImageProvider", "get_image_provider", "is_configured"]


def is_configured(provider: str) -> bool:
    if provider == "local":  # a stand-in: production offers it only by its opt-in (config/settings/production.py)
        return settings.IMAGES_LOCAL_MODEL_OFFERED
    if provider == "openai":
        return bool(settings.OPENAI_API_KEY)
    return False


def get_image_provider(provider: str) -> ImageProvider:
    if not is_configured(provider):
        raise ProviderUnavailable(f"The image provider {provider!r} is not configured on this server.")
    if provider == "openai":
        return OpenAIImages.from_settings()
    return LocalCanvas()
