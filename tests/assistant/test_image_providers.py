from __future__ import annotations

import base64
import io
import json

import httpx
import pytest
from PIL import Image

from assistant.providers.images import get_image_provider
from assistant.providers.images.local import LocalCanvas, render_png
from assistant.providers.images.openai import OpenAIImages
from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderError, ProviderUnavailable


def _images(handler) -> OpenAIImages:
    client = OpenAIClient(
        api_key="sk-img",
        base_url="https://img.example/v1",
        max_retries=1,
        transport=httpx.MockTransport(handler),
        sleep=lambda seconds: None,
    )
    return OpenAIImages(client=client)


def test_local_renders_the_same_png_for_the_same_prompt_and_another_for_another():
    first = LocalCanvas().generate(prompt="a red bicycle", model="canvas-1").content

    assert first == render_png("a red bicycle")
    assert first != render_png("a blue bicycle")
    image = Image.open(io.BytesIO(first))
    assert (image.format, image.size) == ("PNG", (512, 512))


@pytest.mark.parametrize("prompt", ["😀 日本語", "x" * 4000, " ", "line\nbreaks\tand\x01controls"])
def test_local_draws_any_prompt(prompt):
    assert render_png(prompt).startswith(b"\x89PNG")


def test_openai_images_request_and_answer():
    png = render_png("tiny")
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={"data": [{"b64_json": base64.b64encode(png).decode()}]})

    image = _images(handler).generate(prompt="a fox", model="gpt-image-1")

    assert image.content == png
    assert str(seen[0].url) == "https://img.example/v1/images/generations"
    assert seen[0].headers["authorization"] == "Bearer sk-img"
    assert json.loads(seen[0].content) == {"model": "gpt-image-1", "prompt": "a fox", "n": 1, "size": "1024x1024"}


def test_openai_images_retry_a_429_once():
    answers = [
        httpx.Response(429),
        httpx.Response(200, json={"data": [{"b64_json": base64.b64encode(render_png("a")).decode()}]}),
    ]

    image = _images(lambda request: answers.pop(0)).generate(prompt="a", model="gpt-image-1")

    assert image.content.startswith(b"\x89PNG")
    assert answers == []


@pytest.mark.parametrize(
    "body",
    [
        {"data": []},
        {"data": [{"url": "https://elsewhere.example/a.png"}]},
        {"data": [{"b64_json": "!!! not base64 !!!"}]},
        {"data": [{"b64_json": base64.b64encode(b"GIF89a...").decode()}]},
    ],
)
def test_openai_images_unusable_answers_are_provider_errors(body):
    with pytest.raises(ProviderError):
        _images(lambda request: httpx.Response(200, json=body)).generate(prompt="a", model="gpt-image-1")


def test_an_unconfigured_provider_is_unavailable(settings):
    settings.OPENAI_API_KEY = ""

    with pytest.raises(ProviderUnavailable):
        get_image_provider("openai")
    assert isinstance(get_image_provider("local"), LocalCanvas)
