"""The image models AllModelChat offers: identifier, provider, credit cost, and which is the default.

The default is the first model of IMAGE_PROVIDER's provider (the local renderer unless the server
is set up for OpenAI). A model whose provider is not configured is listed as unavailable, and a
request for it is answered 503 `provider_unavailable` before any credit is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from assistant.providers.images import is_configured


@dataclass(frozen=True)
class ImageModel:
    identifier: str
    provider: str  # "local" | "openai"
    provider_model: str  # the provider's own name for it
    credit_cost: int
    description: str

    @property
    def available(self) -> bool:
        return is_configured(self.provider)


IMAGE_MODELS: tuple[ImageModel, ...] = (
    ImageModel(
        identifier="local-canvas-1",
        provider="local",
        provider_model="canvas-1",
        credit_cost=1,
        description="Draws a 512x512 PNG from the prompt on this server; one prompt always gives the same image.",
    ),
    ImageModel(
        identifier="openai-gpt-image-1",
        provider="openai",
        provider_model="gpt-image-1",
        credit_cost=5,
        description="OpenAI's gpt-image-1 at 1024x1024; available when the server has an OpenAI API key.",
    ),
)
MODEL_IDS: tuple[str, ...] = tuple(m.identifier for m in IMAGE_MODELS)


def default_model() -> ImageModel:
    return next((m for m in IMAGE_MODELS if m.provider == settings.IMAGE_PROVIDER), IMAGE_MODELS[0])


def get_model(identifier: str | None) -> ImageModel:
    """The model named, or the default. Unknown names are refused by the request serializer first."""
    if not identifier:
        return default_model()
    for model in IMAGE_MODELS:
        if model.identifier == identifier:
            return model
    raise KeyError(identifier)
