"""Image generation: the model's credits taken, the image drawn and stored, the credits back if it fails."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assistant.domain.image_models import get_model
from assistant.models import CreditTransaction, ImageGeneration
from assistant.providers.images import get_image_provider
from assistant.services.credits import credit_apply
from core.ops.metrics import CREDITS_SPENT, business_count

logger = logging.getLogger(__name__)

# A generation still pending this long after it started was abandoned (its process died): refund it.
STALE_GENERATION_AFTER = timedelta(minutes=15)


# --- Image generation -------------------------------------------------------------------------------


def image_generate(*, user: User, prompt: str, model: str | None, conversation_id: uuid.UUID) -> ImageGeneration:
    """Take the model's credits, draw the image, store it. The credits come back if the provider fails.

    Raises ProviderUnavailable (nothing taken) when the model's provider is not configured,
    InsufficientCredits (nothing taken), or the provider's ProviderError/ProviderUnavailable (refunded).
    """
    image_model = get_model(model)
    provider = get_image_provider(image_model.provider)
    generation = _image_reserve(user=user, image_model=image_model, prompt=prompt, conversation_id=conversation_id)
    try:
        image = provider.generate(prompt=prompt, model=image_model.provider_model)
        name = default_storage.save(f"generated/{generation.id}.{image.extension}", ContentFile(image.content))
    except Exception as exc:
        image_generation_fail(generation_id=generation.id, error=str(exc) or type(exc).__name__)
        raise
    ImageGeneration.objects.filter(pk=generation.pk, status=ImageGeneration.Status.PENDING).update(
        status=ImageGeneration.Status.SUCCEEDED, storage_name=name, completed_at=timezone.now()
    )
    generation.refresh_from_db()
    return generation


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
