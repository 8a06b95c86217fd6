"""The image providers' interface: `generate(prompt=..., model=...)` gives back a GeneratedImage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class GeneratedImage:
    content: bytes
    content_type: str = "image/png"
    extension: str = "png"


class ImageProvider(Protocol):
    def generate(self, *, prompt: str, model: str) -> GeneratedImage:
        """Raises core.http.errors.ProviderError (bad answer) or ProviderUnavailable (cannot be reached)."""
        ...
