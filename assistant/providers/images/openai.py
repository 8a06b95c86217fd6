"""OpenAI-compatible image generation (`POST {OPENAI_BASE_URL}/images/generations`, base64 PNG back)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from assistant.providers.images.base import GeneratedImage
from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class OpenAIImages:
    def __init__(self, *, client: OpenAIClient, size: str = "1024x1024"):
        self.client = client
        self.size = size

    @classmethod
    def from_settings(cls, **client_options: Any) -> OpenAIImages:
        return cls(client=OpenAIClient.from_settings(**client_options))

    def generate(self, *, prompt: str, model: str) -> GeneratedImage:
        body = self.client.post_json(
            "/images/generations", {"model": model, "prompt": prompt, "n": 1, "size": self.size}
        )
        try:
            encoded = body["data"][0]["b64_json"]
            content = base64.b64decode(encoded, validate=True)
        except (KeyError, IndexError, TypeError, binascii.Error) as exc:
            raise ProviderError("The image provider answered without an image.") from exc
        if not content.startswith(PNG_SIGNATURE):
            raise ProviderError("The image provider answered with something other than a PNG.")
        return GeneratedImage(content=content)
