"""The local image model: draws a picture from the prompt with Pillow, on this machine.

The prompt's SHA-256 seeds everything (palette, gradient, shapes), so one prompt always gives the
same PNG; the prompt itself is written, wrapped, on a band at the bottom.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import random
import textwrap

from PIL import Image, ImageDraw, ImageFont

from assistant.providers.images.base import GeneratedImage

SIZE = 512
MAX_TEXT_LINES = 4


class LocalCanvas:
    def generate(self, *, prompt: str, model: str = "canvas-1") -> GeneratedImage:
        return GeneratedImage(content=render_png(prompt))


def render_png(prompt: str, size: int = SIZE) -> bytes:
    rng = random.Random(hashlib.sha256(prompt.encode()).digest())  # noqa: S311 - art, not security
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
    image = Image.alpha_composite(image.convert("RGBA"), shapes)

    _caption(image, prompt, size)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG")
    return out.getvalue()


def _color(hue: float, saturation: float, value: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(hue, saturation, value)
    return round(r * 255), round(g * 255), round(b * 255)


def _font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except (OSError, TypeError, ImportError):  # Pillow without FreeType: the small bitmap font
        return ImageFont.load_default()


def _caption(image: Image.Image, prompt: str, size: int) -> None:
    lines = textwrap.wrap(" ".join(prompt.split()), width=40) or [""]
    if len(lines) > MAX_TEXT_LINES:
        lines = [
            *lines[: MAX_TEXT_LINES - 1],
            textwrap.shorten(" ".join(lines[MAX_TEXT_LINES - 1 :]), 40, placeholder=" …"),
        ]
    font, line_height, margin = _font(size // 24), size // 20, size // 32
    band_height = line_height * len(lines) + 2 * margin
    band = Image.new("RGBA", (size, band_height), (0, 0, 0, 150))
    image.alpha_composite(band, (0, size - band_height))
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((margin, size - band_height + margin + index * line_height), line, font=font, fill=(255, 255, 255))
