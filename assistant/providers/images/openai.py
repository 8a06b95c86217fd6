"""OpenAI-compatible image generation (`POST {OPENAI_BASE_URL}/images/generations`, base64 PNG back).

A brand kit's style reaches it as words only (docs/decisions.md#images-from-the-brand-kit): the generations
API takes a prompt, no palette and no image, so the kit's colours and description follow the caller's prompt,
cut to fit PROMPT_MAX_CHARS; the logo is not sent.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from assistant.providers.images.base import BrandStyle, GeneratedImage
from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PROMPT_MAX_CHARS = 4000  # the smallest limit of the models the API serves (dall-e-3)


def branded_prompt(prompt: str, style: BrandStyle | None) -> str:
    """The caller's prompt, whole, then the brand's words in the room left."""
    if style is None:
        return prompt
    words = [f"Brand: {style.name}."]
    if style.colors:
        colors = style.hex_colors
        words.append(f"Use only the brand's colours {', '.join(colors)}, with {colors[0]} as the background.")
    if style.description:
        words.append(f"About the brand: {' '.join(style.description.split())}")
    room = PROMPT_MAX_CHARS - len(prompt) - 2
    return f"{prompt}\n\n{' '.join(words)[:room]}" if room > 20 else prompt


class OpenAIImages:
    def __init__(self, *, client: OpenAIClient, size: str = "1024x1024"):
        self.client = client
        self.size = size

    @classmethod
    def from_settings(cls, **client_options: Any) -> OpenAIImages:
        return cls(client=OpenAIClient.from_settings(**client_options))

    def generate(self, *, prompt: str, model: str, style: BrandStyle | None = None) -> GeneratedImage:
        body = self.client.post_json(
            "/images/generations",
            {"model": model, "prompt": branded_prompt(prompt, style), "n": 1, "size": self.size},
        )
        try:
            encoded = body["data"][0]["b64_json"]
            content = base64.b64decode(encoded, validate=True)
        except (KeyError, IndexError, TypeError, binascii.Error) as exc:
            raise ProviderError("The image provider answered without an image.") from exc
        if not content.startswith(PNG_SIGNATURE):
            raise ProviderError("The image provider answered with something other than a PNG.")
        return GeneratedImage(content=content)
