"""Images in a brand kit's style (docs/decisions.md#images-from-the-brand-kit): `brand_id` on generate/image."""

from __future__ import annotations

import io
import uuid
from collections import Counter
from urllib.parse import urlsplit

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image, ImageFont

from assistant.models import CreditTransaction, ImageGeneration
from assistant.providers.images import BrandStyle
from assistant.providers.images.local import render_png
from assistant.providers.images.openai import PROMPT_MAX_CHARS, branded_prompt
from tests.brands.factories import BrandFactory, BrandKitFactory
from tests.support.credits import credits_of, credits_set

GENERATE = "/api/v1/allmodelchat/generate/image"
PROMPT = "Spring sale, 20% off every roast"
NAVY, GOLD, GREEN, LOGO_RED = (16, 32, 48), (240, 192, 32), (32, 160, 96), (255, 0, 0)


def _png(color, size=(60, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def _pixels(content: bytes) -> tuple[Image.Image, Counter]:
    image = Image.open(io.BytesIO(content)).convert("RGB")
    return image, Counter(image.get_flattened_data())


def _generate(client, **body):
    return client.post(GENERATE, {"prompt": PROMPT, "conversation_id": str(uuid.uuid4()), **body}, format="json")


def _served(client, response) -> bytes:
    return b"".join(client.get(urlsplit(response.json()["url"]).path).streaming_content)


@pytest.mark.django_db
def test_the_local_model_draws_in_the_kits_colours_with_its_logo(alice_api, alice):
    credits_set(alice, 3)
    logo = default_storage.save(f"logos/{uuid.uuid4()}.png", ContentFile(_png(LOGO_RED)))
    brand = BrandFactory(owner=alice, name="Northwind")
    BrandKitFactory(brand=brand, colors=["#102030", "#f0c020", "#20a060"], logo_url=f"https://testserver/media/{logo}")

    response = _generate(alice_api, brand_id=str(brand.id))

    assert response.status_code == 200, response.content
    assert set(response.json()) == {"url", "model", "credit_cost"}
    image, counts = _pixels(_served(alice_api, response))
    # The background is the kit's first colour: the commonest pixel, on most of the picture.
    assert counts.most_common(1)[0][0] == NAVY
    assert counts[NAVY] > 0.3 * 512 * 512
    # The caption band is the accent, and the palette's other colour fills shapes.
    assert image.getpixel((2, 510)) == GOLD
    assert counts[GOLD] > 0.05 * 512 * 512 and counts[GREEN] > 500
    # The logo, scaled into the top-right corner.
    assert image.getpixel((512 - 16 - 50, 16 + 30)) == LOGO_RED
    assert counts[LOGO_RED] > 1000
    # Without the brand the same prompt has none of these colours.
    _, plain = _pixels(render_png(PROMPT))
    assert plain[NAVY] == plain[GOLD] == plain[GREEN] == plain[LOGO_RED] == 0
    alice.refresh_from_db()
    assert credits_of(alice) == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("colors", "background", "band"),
    [
        (["#f0c020"], GOLD, (0, 0, 0)),  # one light colour: black band
        (["#102030"], NAVY, (255, 255, 255)),  # one dark colour: white band
        ([], None, None),  # no colours: the prompt's own palette
    ],
    ids=["one-light-colour", "one-dark-colour", "no-colours"],
)
def test_a_kit_with_fewer_colours(alice_api, alice, colors, background, band):
    credits_set(alice, 1)
    brand = BrandFactory(owner=alice)
    BrandKitFactory(brand=brand, colors=colors)

    response = _generate(alice_api, brand_id=str(brand.id))

    assert response.status_code == 200, response.content
    image, counts = _pixels(_served(alice_api, response))
    if background is None:
        assert _served(alice_api, response) == render_png(PROMPT)
    else:
        assert counts.most_common(1)[0][0] == background
        assert image.getpixel((2, 510)) == band


@pytest.mark.django_db
def test_the_newest_kit_of_the_brand_is_used(alice_api, alice):
    credits_set(alice, 1)
    brand = BrandFactory(owner=alice)
    BrandKitFactory(brand=brand, colors=["#20a060"])
    BrandKitFactory(brand=brand, colors=["#102030", "#f0c020"])

    response = _generate(alice_api, brand_id=str(brand.id))

    assert _pixels(_served(alice_api, response))[1].most_common(1)[0][0] == NAVY


@pytest.mark.django_db
@pytest.mark.parametrize("whose", ["bob", "nobody"])
def test_another_users_brand_or_none_is_404_and_takes_nothing(alice_api, alice, bob, whose):
    credits_set(alice, 3)
    brand_id = BrandKitFactory(brand=BrandFactory(owner=bob)).brand_id if whose == "bob" else uuid.uuid4()

    response = _generate(alice_api, brand_id=str(brand_id))

    assert response.status_code == 404
    assert response.json() == {"detail": "No such brand.", "code": "not_found"}
    alice.refresh_from_db()
    assert credits_of(alice) == 3
    assert not ImageGeneration.objects.exists() and not CreditTransaction.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "logo_drawn"),
    [("/good-logo.png", True), ("/logo.png", False), ("/missing", False)],
    ids=["fetched", "not-an-image", "404"],
)
def test_a_logo_elsewhere_is_fetched_with_the_outbound_client(alice_api, alice, site, monkeypatch, path, logo_drawn):
    from tests.assistant import conftest

    monkeypatch.setitem(conftest.ROUTES, "/good-logo.png", (200, "image/png", _png(LOGO_RED)))
    credits_set(alice, 1)
    brand = BrandFactory(owner=alice)
    BrandKitFactory(brand=brand, colors=["#102030", "#f0c020"], logo_url=f"{site}{path}")

    response = _generate(alice_api, brand_id=str(brand.id))

    assert response.status_code == 200, response.content  # a logo that cannot be had is left out
    assert (_pixels(_served(alice_api, response))[1][LOGO_RED] > 1000) is logo_drawn


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["logos/missing.png", "/etc/passwd", "../../etc/passwd"])
def test_a_stored_logo_that_cannot_be_read_is_left_out(alice_api, alice, path):
    credits_set(alice, 1)
    brand = BrandFactory(owner=alice)
    BrandKitFactory(brand=brand, colors=["#102030", "#f0c020"], logo_url=f"https://testserver/media/{path}")

    response = _generate(alice_api, brand_id=str(brand.id))

    assert response.status_code == 200, response.content
    assert _served(alice_api, response) == render_png(PROMPT, style=BrandStyle(name=brand.name, colors=(NAVY, GOLD)))


def test_the_kits_font_is_used_where_this_machine_has_it():
    try:
        ImageFont.truetype("DejaVuSerif.ttf", 12)
    except OSError:
        pytest.skip("no DejaVu fonts on this machine")
    colors = (NAVY, GOLD)
    plain = render_png(PROMPT, style=BrandStyle(name="N", colors=colors))

    assert render_png(PROMPT, style=BrandStyle(name="N", colors=colors, fonts=("No Such Font",))) == plain
    assert render_png(PROMPT, style=BrandStyle(name="N", colors=colors, fonts=("DejaVu Serif",))) != plain


@pytest.mark.django_db
def test_a_remote_model_is_told_the_colours_and_the_description(alice_api, alice, fake_openai):
    import base64

    credits_set(alice, 5)
    fake_openai.replies = [(200, {"data": [{"b64_json": base64.b64encode(_png((1, 2, 3))).decode()}]})]
    brand = BrandFactory(owner=alice, name="Northwind")
    BrandKitFactory(brand=brand, colors=["#102030", "#f0c020"], description="Small-batch coffee from Leeds.")

    response = _generate(alice_api, model="openai-gpt-image-1", brand_id=str(brand.id))

    assert response.status_code == 200, response.content
    assert fake_openai.requests[0]["body"]["prompt"] == (
        f"{PROMPT}\n\nBrand: Northwind. Use only the brand's colours #102030, #f0c020, with #102030 as the "
        "background. About the brand: Small-batch coffee from Leeds."
    )


def test_the_brand_words_never_cut_the_callers_prompt():
    style = BrandStyle(name="Northwind", colors=(NAVY,), description="d" * 5000)

    assert len(branded_prompt("p" * 100, style)) == PROMPT_MAX_CHARS
    assert branded_prompt("p" * PROMPT_MAX_CHARS, style) == "p" * PROMPT_MAX_CHARS
    assert branded_prompt("a fox", None) == "a fox"
