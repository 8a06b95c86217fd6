"""The image providers' interface: `generate(prompt=..., model=..., style=...)` gives back a GeneratedImage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class GeneratedImage:
    content: bytes
    content_type: str = "image/png"
    extension: str = "png"


@dataclass(frozen=True)
class BrandStyle:
    """What a brand kit gives a picture (docs/decisions.md#images-from-the-brand-kit).

    `colors[0]` is the background, `colors[1]` the accent, every colour is the palette; `logo` is the kit's
    logo image, already fetched (bytes), or None.
    """

    name: str
    colors: tuple[RGB, ...] = ()
    fonts: tuple[str, ...] = ()
    description: str = ""
    logo: bytes | None = None

    @property
    def hex_colors(self) -> list[str]:
        return ["#{:02x}{:02x}{:02x}".format(*color) for color in self.colors]


class ImageProvider(Protocol):
    def generate(self, *, prompt: str, model: str, style: BrandStyle | None = None) -> GeneratedImage:
        """Raises core.http.errors.ProviderError (bad answer) or ProviderUnavailable (cannot be reached)."""
        ...
