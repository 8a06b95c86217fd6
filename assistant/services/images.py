"""Image generation: the model's credits taken, the image drawn and stored, the credits back if it fails."""

from __future__ import annotations

import logging
import re
import uuid
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assistant.domain.image_models import get_model
from assistant.models import CreditTransaction, ImageGeneration
from assistant.providers.images import BrandStyle, get_image_provider
from assistant.services.credits import credit_apply
from brands.selectors.brands import brand_of, kits_of
from core.http.outbound import OutboundError, fetch
from core.ops.metrics import CREDITS_SPENT, business_count

logger = logging.getLogger(__name__)

# A generation still pending this long after it started was abandoned (its process died): refund it.
STALE_GENERATION_AFTER = timedelta(minutes=15)


# --- Image generation -------------------------------------------------------------------------------


def image_generate(
    *, user: User, prompt: str, model: str | None, conversation_id: uuid.UUID, brand_id: uuid.UUID | None = None
) -> ImageGeneration:
    """Take the model's credits, draw the image, store it. The credits come back if the provider fails.

    With `brand_id` (one of the user's brands, else NotFound) the picture takes the brand kit's style.
    Raises ProviderUnavailable (nothing taken) when the model's provider is not configured,
    InsufficientCredits (nothing taken), or the provider's ProviderError/ProviderUnavailable (refunded).
    """
    image_model = get_model(model)
    provider = get_image_provider(image_model.provider)
    style = brand_style(owner=user, brand_id=brand_id) if brand_id is not None else None
    generation = _image_reserve(user=user, image_model=image_model, prompt=prompt, conversation_id=conversation_id)
    try:
        image = provider.generate(prompt=prompt, model=image_model.provider_model, style=style)
        name = default_storage.save(f"generated/{generation.id}.{image.extension}", ContentFile(image.content))
    except Exception as exc:
        image_generation_fail(generation_id=generation.id, error=str(exc) or type(exc).__name__)
        raise
    ImageGeneration.objects.filter(pk=generation.pk, status=ImageGeneration.Status.PENDING).update(
        status=ImageGeneration.Status.SUCCEEDED, storage_name=name, completed_at=timezone.now()
    )
    generation.refresh_from_db()
    return generation


# --- A brand's style (docs/decisions.md#images-from-the-brand-kit) ------------------------------------

_HEX_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
LOGO_MAX_BYTES = 2 * 1024 * 1024


def brand_style(*, owner: User, brand_id: uuid.UUID) -> BrandStyle:
    """The style of the owner's brand: its newest kit's colours, fonts, logo and description (NotFound for a
    brand that is not the owner's). A brand without a kit gives its name and description only."""
    brand = brand_of(owner, brand_id)
    kit = kits_of(owner, brand_id=brand.id).first()
    if kit is None:
        return BrandStyle(name=brand.name, description=brand.description)
    colors = tuple(tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in kit.colors if _HEX_COLOR.match(str(c)))
    return BrandStyle(
        name=brand.name,
        colors=colors,
        fonts=tuple(str(font) for font in kit.fonts),
        description=kit.description or kit.tagline or brand.description,
        logo=_kit_logo(kit.logo_url),
    )


def _kit_logo(url: str) -> bytes | None:
    """The logo's bytes: read from the media storage when the URL is one of its files, else fetched with the
    outbound-safe client (no private address, a deadline, at most LOGO_MAX_BYTES). None when it cannot be had:
    the picture is drawn without it."""
    if not url:
        return None
    name = _stored_name(url)
    try:
        if name is not None:
            with default_storage.open(name, "rb") as stored:
                content = stored.read(LOGO_MAX_BYTES + 1)
            complete = len(content) <= LOGO_MAX_BYTES
        else:
            fetched = fetch(url, max_bytes=LOGO_MAX_BYTES, max_redirects=3)
            content, complete = fetched.content, fetched.status_code == 200 and not fetched.truncated
    except (OutboundError, ValueError) as exc:
        logger.warning("The brand kit's logo %s could not be fetched: %s", url, exc)
        return None
    except Exception as exc:  # the storage's own errors (a missing object, a name it refuses): left out too
        logger.warning("The brand kit's logo %s could not be read from the media storage: %r", url, exc)
        return None
    if not complete or not content:
        logger.warning("The brand kit's logo %s was unusable (an error, or over %d bytes)", url, LOGO_MAX_BYTES)
        return None
    return content


def _stored_name(url: str) -> str | None:
    """The media storage's name for a URL of one of its files (its own base URL, or MEDIA_URL on this host)."""
    base = default_storage.url("")
    parts = urlsplit(url)
    if base.startswith(("https://", "http://")):
        name = url.removeprefix(base) if url.startswith(base) and not parts.query else None
    elif parts.path.startswith(settings.MEDIA_URL) and parts.hostname in settings.ALLOWED_HOSTS:
        name = parts.path.removeprefix(settings.MEDIA_URL)
    else:
        name = None
    return name if name and ".." not in name.split("/") else None


@transaction.atomic
def _image_reserve(*, user: User, image_model, prompt: str, conversation_id: uuid.UUID) -> ImageGeneration:
    generation = ImageGeneration.objects.create(
        user=user,
        conversation_id=conversation_id,
        model=image_model.identifier,
        prompt=prompt,
        credit_cost=image_model.credit_cost,
    )
    credit_apply(
        user_id=user.pk,
        delta=-image_model.credit_cost,
        kind=CreditTransaction.Kind.IMAGE_GENERATION,
        reason=f"Image with {image_model.identifier}",
        reference=str(generation.id),
    )
    business_count(CREDITS_SPENT, image_model.credit_cost)
    return generation


@transaction.atomic
def image_generation_fail(*, generation_id: uuid.UUID, error: str) -> bool:
    """Mark a pending generation failed and give its credits back. Safe to call twice: refunds once.

    The conditional UPDATE (pending → failed) decides who refunds, and also settles a race with the
    generation succeeding (pending → succeeded): exactly one of them moves it.
    """
    if not ImageGeneration.objects.filter(pk=generation_id, status=ImageGeneration.Status.PENDING).update(
        status=ImageGeneration.Status.FAILED, error=error[:2000], completed_at=timezone.now()
    ):
        return False
    generation = ImageGeneration.objects.get(pk=generation_id)
    credit_apply(
        user_id=generation.user_id,
        delta=generation.credit_cost,
        kind=CreditTransaction.Kind.IMAGE_REFUND,
        reason=f"Refund: the image with {generation.model} failed",
        reference=str(generation.id),
    )
    return True


def image_generations_refund_stale(*, now=None) -> int:
    """Refund generations left pending by a process that died mid-call. Returns how many."""
    cutoff = (now or timezone.now()) - STALE_GENERATION_AFTER
    ids = ImageGeneration.objects.filter(status=ImageGeneration.Status.PENDING, created_at__lt=cutoff).values_list(
        "id", flat=True
    )
    refunded = sum(image_generation_fail(generation_id=i, error="Abandoned: no result in time.") for i in ids)
    if refunded:
        logger.warning("Refunded %d abandoned image generation(s)", refunded)
    return refunded
