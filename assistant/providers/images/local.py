"""The local image model: draws a picture from the prompt with Pillow, on this machine.

The prompt's SHA-256 seeds everything (palette, gradient, shapes), so one prompt always gives the
same PNG; the prompt itself is written, wrapped, on a band at the bottom.

With a brand kit's style (docs/decisions.md#images-from-the-brand-kit) the kit's colours replace the
seeded ones, exactly: the background is the first colour, the band the second (the accent), the shapes
are drawn opaque in the palette's colours; the caption is in the kit's first font this machine has, and
the kit's logo is composited in the top-right corner.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import logging
import random
import textwrap

from PIL import Image, ImageDraw, ImageFont

from assistant.providers.images.base import RGB, BrandStyle, GeneratedImage

logger = logging.getLogger(__name__)

SIZE = 512
MAX_TEXT_LINES = 4
LOGO_MAX_PIXELS = 4096 * 4096  # a bigger logo is not decoded (a decompression bomb, or not a logo)


class LocalCanvas:
    def generate(self, *, prompt: str, model: str = "canvas-1", style: BrandStyle | None = None) -> GeneratedImage:
        return GeneratedImage(content=render_png(prompt, style=style))


def render_png(prompt: str, size: int = SIZE, style: BrandStyle | None = None) -> bytes:
    rng = random.Random(hashlib.sha256(prompt.encode()).digest())  # noqa: S311 - art, not security
    if style is not None and style.colors:
        image, band = _branded(rng, style.colors, size), _accent(style.colors)
    else:
        image, band = _seeded(rng, size), None
    if style is not None and style.logo:
        _logo(image, style.logo, size)
    font = _kit_font(style.fonts, size // 24) if style is not None else None
    _caption(image, prompt, size, band=band, ink=_ink(band), font=font)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG")
    return out.getvalue()


def _seeded(rng: random.Random, size: int) -> Image.Image:
    hue = rng.random()
    top, bottom = _color(hue, 0.55, 0.95), _color((hue + 0.12) % 1, 0.75, 0.45)

    image = Image.new("RGB", (size, size))
    draw = ImageDraw.Draw(image)
    for y in range(size):
        t = y / (size - 1)
        draw.line([(0, y), (size, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)))

    shapes = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    pen = ImageDraw.Draw(shapes)
    for _ in range(rng.randint(5, 9)):
        color = (*_color((hue + rng.choice([0.33, 0.5, 0.66, 0.08])) % 1, rng.uniform(0.4, 0.9), rng.uniform(0.5, 1)),)
        fill = (*color, rng.randint(90, 200))
        x, y, r = rng.randint(0, size), rng.randint(0, size * 3 // 4), rng.randint(size // 16, size // 4)
        kind = rng.choice(["ellipse", "rectangle", "polygon"])
        if kind == "ellipse":
            pen.ellipse([x - r, y - r, x + r, y + r], fill=fill)
        elif kind == "rectangle":
            pen.rectangle([x - r, y - r // 2, x + r, y + r // 2], fill=fill)
        else:
            pen.regular_polygon((x, y, r), n_sides=rng.randint(3, 6), rotation=rng.randint(0, 359), fill=fill)
    return Image.alpha_composite(image.convert("RGBA"), shapes)


def _branded(rng: random.Random, colors: tuple[RGB, ...], size: int) -> Image.Image:
    """The kit's background, with opaque shapes in the palette's other colours (all of them when it has one)."""
    image = Image.new("RGBA", (size, size), (*colors[0], 255))
    pen = ImageDraw.Draw(image)
    palette = colors[1:] or (_accent(colors),)
    for index in range(rng.randint(5, 9)):
        fill = (*palette[index % len(palette)], 255)
        x, y, r = rng.randint(0, size), rng.randint(0, size * 3 // 4), rng.randint(size // 16, size // 6)
        kind = rng.choice(["ellipse", "rectangle", "polygon"])
        if kind == "ellipse":
            pen.ellipse([x - r, y - r, x + r, y + r], fill=fill)
        elif kind == "rectangle":
            pen.rectangle([x - r, y - r // 2, x + r, y + r // 2], fill=fill)
        else:
            pen.regular_polygon((x, y, r), n_sides=rng.randint(3, 6), rotation=rng.randint(0, 359), fill=fill)
    return image


def _accent(colors: tuple[RGB, ...]) -> RGB:
    """The kit's second colour; with one colour only, black or white, whichever stands out on it."""
    if len(colors) > 1:
        return colors[1]
    return (0, 0, 0) if _luminance(colors[0]) > 0.5 else (255, 255, 255)


def _luminance(color: RGB) -> float:
    r, g, b = (c / 255 for c in color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _ink(band: RGB | None) -> RGB:
    return (255, 255, 255) if band is None or _luminance(band) <= 0.5 else (0, 0, 0)


def _kit_font(names: tuple[str, ...], px: int) -> ImageFont.FreeTypeFont | None:
    """The kit's first font this machine has (looked up as Pillow does: a font file name on the font path)."""
    for name in names:
        for candidate in (name, f"{name}.ttf", f"{name.replace(' ', '')}.ttf", f"{name.replace(' ', '-')}.ttf"):
            try:
                return ImageFont.truetype(candidate, px)
            except (OSError, ValueError):
                continue
    return None


def _logo(image: Image.Image, content: bytes, size: int) -> None:
    """The logo, at most a fifth of the picture's side, in the top-right corner; an unreadable one is left out."""
    try:
        with Image.open(io.BytesIO(content)) as opened:
            if opened.width * opened.height > LOGO_MAX_PIXELS:
                raise ValueError(f"a {opened.width}x{opened.height} logo is too large")
            logo = opened.convert("RGBA")
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        logger.warning("The brand kit's logo could not be drawn: %s", exc)
        return
    box = size // 5
    logo.thumbnail((box, box))
    margin = size // 32
    image.alpha_composite(logo, (size - margin - logo.width, margin))


def _color(hue: float, saturation: float, value: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(hue, saturation, value)
    return round(r * 255), round(g * 255), round(b * 255)


def _font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except (OSError, TypeError, ImportError):  # Pillow without FreeType: the small bitmap font
        return ImageFont.load_default()


def _caption(
    image: Image.Image,
    prompt: str,
    size: int,
    *,
    band: RGB | None = None,
    ink: RGB = (255, 255, 255),
    font: ImageFont.FreeTypeFont | None = None,
) -> None:
    lines = textwrap.wrap(" ".join(prompt.split()), width=40) or [""]
    if len(lines) > MAX_TEXT_LINES:
        lines = [
            *lines[: MAX_TEXT_LINES - 1],
            textwrap.shorten(" ".join(lines[MAX_TEXT_LINES - 1 :]), 40, placeholder=" …"),
        ]
    font, line_height, margin = font or _font(size // 24), size // 20, size // 32
    band_height = line_height * len(lines) + 2 * margin
    fill = (0, 0, 0, 150) if band is None else (*band, 255)  # a kit's accent exactly, else a shade
    image.alpha_composite(Image.new("RGBA", (size, band_height), fill), (0, size - band_height))
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((margin, size - band_height + margin + index * line_height), line, font=font, fill=ink)
