"""Image generation behind one small interface: `provider.generate(prompt=..., model=...)` → PNG bytes.

`local` draws the picture here with Pillow; `openai` calls an OpenAI-compatible images API. Which
model uses which provider is the registry's business (assistant/registry.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

from core.errors import ProviderUnavailable


@dataclass(frozen=True)
class GeneratedImage:
    content: bytes
    content_type: str = "image/png"
    extension: str = "png"


class ImageProvider(Protocol):
    def generate(self, *, prompt: str, model: str) -> GeneratedImage:
        """Raises core.errors.ProviderError (bad answer) or ProviderUnavailable (cannot be reached)."""
        ...


def is_configured(provider: str) -> bool:
    if provider == "local":
        return True
    if provider == "openai":
        return bool(settings.OPENAI_API_KEY)
    return False


def get_image_provider(provider: str) -> ImageProvider:
    if not is_configured(provider):
        raise ProviderUnavailable(f"The image provider {provider!r} is not configured on this server.")
    if provider == "openai":
        from assistant.providers.images.openai import OpenAIImages

        return OpenAIImages.from_settings()
    from assistant.providers.images.local import LocalCanvas

    return LocalCanvas()
