"""Writes: the assistant's conversation, the credit ledger and image generation."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from assistant.domain.image_models import IMAGE_MODELS, default_model, get_model
from assistant.models import Assistant, AssistantMessage, CreditTopUp, CreditTransaction, ImageGeneration
from assistant.providers.images import get_image_provider
from assistant.providers.llm import ChatMessage, get_llm_provider
from core.errors import InsufficientCredits, NotFound
from core.metrics import CREDITS_SPENT, business_count
from payments.money import event_money_mismatch
from payments.providers import get_payment_provider
from payments.sessions import link_checkout_session

logger = logging.getLogger(__name__)

HISTORY_FOR_CONTEXT = 20  # earlier messages the language model sees
REPLY_MAX_TOKENS = 800
# A generation still pending this long after it started was abandoned (its process died): refund it.
STALE_GENERATION_AFTER = timedelta(minutes=15)

SYSTEM_PROMPT = (
    "You are the marketing assistant of the Brand Marketing and Task Platform. Answer briefly and concretely. "
    "You can explain image generation (AllModelChat, paid in credits), the ad budget simulator, and the free "
    "creative brief and tagline tools. Use the facts below about the user; never invent account data."
)


# --- Assistant ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    user_message: AssistantMessage
    assistant_message: AssistantMessage


def assistant_message_send(*, user: User, content: str, attachments: list[dict[str, Any]] | None = None) -> Exchange:
    """Store the user's message and the assistant's reply. If the language model fails, nothing is stored."""
    attachments = attachments or []
    received_at = timezone.now()
    history = list(
        AssistantMessage.objects.filter(assistant__user=user).order_by("-created_at", "-id")[:HISTORY_FOR_CONTEXT]
    )
    prompt = content + "".join(f"\n[Attached {a['type']}: {a['url']}]" for a in attachments)
    messages: list[ChatMessage] = [{"role": m.role, "content": m.content} for m in reversed(history)]
    messages.append({"role": "user", "content": prompt})

    reply = get_llm_provider().complete(
        system=_system_prompt(user, message_count=len(history)), messages=messages, max_tokens=REPLY_MAX_TOKENS
    )

    has_image = any(a["type"] == "image" for a in attachments)
    with transaction.atomic():
        # Locked, so that a concurrent DELETE /assistant/me waits for these messages rather than orphaning them.
        assistant = Assistant.objects.select_for_update().filter(user=user).first()
        if assistant is None:
            assistant, _ = Assistant.objects.get_or_create(user=user)
        user_message = AssistantMessage.objects.create(
            assistant=assistant,
            role=AssistantMessage.Role.USER,
            content=content,
            message_type=AssistantMessage.MessageType.IMAGE if has_image else AssistantMessage.MessageType.TEXT,
            attachments=attachments,
            created_at=received_at,
        )
        assistant_message = AssistantMessage.objects.create(
            assistant=assistant,
            role=AssistantMessage.Role.ASSISTANT,
            content=reply.text,
            model=reply.model,
            # Strictly after the question, so "newest first" always puts the reply above it.
            created_at=max(timezone.now(), received_at + timedelta(microseconds=1)),
        )
    return Exchange(user_message=user_message, assistant_message=assistant_message)


def assistant_delete(*, user: User) -> None:
    """Delete the user's assistant and its whole history. Nothing to delete is fine."""
    Assistant.objects.filter(user=user).delete()


def _system_prompt(user: User, *, message_count: int) -> str:
    default = default_model()
    models = ", ".join(
        f"{m.identifier} ({m.credit_cost} credit{'s' if m.credit_cost != 1 else ''}"
        + ("" if m.available else ", unavailable")
        + ")"
        for m in IMAGE_MODELS
    )
    facts = {
        "name": user.email,
        "credits": user.credits,
        "default image model": f"{default.identifier} ({default.credit_cost} credits per image)",
        "image models": models,
        "images generated": ImageGeneration.objects.filter(user=user, status=ImageGeneration.Status.SUCCEEDED).count(),
        "messages so far": message_count,
    }
    return SYSTEM_PROMPT + "\n\nContext:\n" + "\n".join(f"- {k}: {v}" for k, v in facts.items())


# --- Credits --------------------------------------------------------------------------------------


def _credit_apply(
    *, user_id: uuid.UUID, delta: int, kind: str, reason: str, reference: str = "", actor: User | None = None
) -> CreditTransaction:
    """Change a balance by `delta` and record it. Call inside a transaction.

    A debit is one conditional UPDATE (`credits >= cost`): concurrent debits serialise on the row,
    and the balance can never go below zero.
    """
    rows = User.objects.filter(pk=user_id)
    if delta < 0:
        rows = rows.filter(credits__gte=-delta)
    if rows.update(credits=F("credits") + delta) == 0:
        raise InsufficientCredits()
    # Our UPDATE holds the row lock until commit, so this reads exactly the balance we left.
    balance = User.objects.filter(pk=user_id).values_list("credits", flat=True).get()
    return CreditTransaction.objects.create(
        user_id=user_id, delta=delta, kind=kind, reason=reason, reference=reference, balance_after=balance, actor=actor
    )


@transaction.atomic
def credits_adjust(*, user: User, delta: int, reason: str, actor: User | None = None) -> CreditTransaction:
    """Staff grant (delta > 0) or take back (delta < 0) credits, saying why. Never below zero."""
    if delta == 0:
        raise ValueError("An adjustment changes the balance.")
    if not reason.strip():
        raise ValueError("An adjustment needs a reason.")
    return _credit_apply(
        user_id=user.pk, delta=delta, kind=CreditTransaction.Kind.ADJUSTMENT, reason=reason.strip(), actor=actor
    )


@transaction.atomic
def credits_grant_signup(*, user: User) -> CreditTransaction | None:
    """The SIGNUP_CREDITS a new account starts with, written to its ledger as a grant (none when 0)."""
    amount = settings.SIGNUP_CREDITS
    if amount <= 0:
        return None
    return _credit_apply(
        user_id=user.pk, delta=amount, kind=CreditTransaction.Kind.GRANT, reason=f"Welcome: {amount} credits"
    )


def credit_pack(pack_id: str) -> dict[str, Any]:
    for pack in settings.CREDIT_PACKS:
        if pack["id"] == pack_id:
            return pack
    raise NotFound("No such credit pack.")


def credit_top_up_start(*, user: User, pack: str, success_url: str = "", cancel_url: str = "") -> CreditTopUp:
    """Create the payment for a credit pack at the provider; its credits come when the payment succeeds.

    The top-up row is written after the provider answered (no transaction is held open over the call);
    the payer needs its `checkout_url` to pay, so no event can arrive before the row exists.
    """
    chosen = credit_pack(pack)
    top_up_id = uuid.uuid4()
    provider = get_payment_provider()
    # A client's retry of the request is the Idempotency-Key header's business (core.idempotency); this key
    # makes a retried provider call inside this one top-up create one payment.
    payment = provider.create_payment(
        amount=chosen["price"],
        currency=chosen["currency"],
        metadata={"kind": "credit_top_up", "top_up_id": str(top_up_id), "user_id": str(user.pk), "pack": pack},
        idempotency_key=f"credit-top-up:{top_up_id}",
        description=f"{chosen['credits']} image-generation credits ({pack} pack)",
        success_url=success_url,
        cancel_url=cancel_url,
    )
    return CreditTopUp.objects.create(
        id=top_up_id,
        user=user,
        pack=pack,
        credits=chosen["credits"],
        provider=provider.name,
        provider_payment_id=payment.id,
        amount=payment.amount,
        currency=payment.currency,
        client_secret=payment.client_secret,
        checkout_url=payment.checkout_url,
    )


def credit_top_up_link_intent(*, payment_intent_id: str, session_id: str = "", top_up_id: object = None) -> bool:
    """Give the top-up whose provider reference is still a checkout session (`cs_...`) the id of the
    PaymentIntent the session created (Stripe Checkout creates it only when the customer pays).

    Found by the session (`checkout.session.completed`) or by the intent's metadata `top_up_id`
    (a `payment_intent.*` event that came first); whichever comes second changes nothing.
    """
    linked = link_checkout_session(
        CreditTopUp.objects.all(), "provider_payment_id", payment_intent_id, session_id=session_id, record_id=top_up_id
    )
    if linked:
        logger.info("top-up payment %s linked to intent %s", session_id or top_up_id, payment_intent_id)
    return linked


class TopUpMismatch(Exception):
    """A success event whose amount or currency is not the top-up's: nothing was credited."""


@transaction.atomic
def credit_top_up_apply_succeeded(
    *, provider_payment_id: str, amounts: dict[str, object] | None = None, currency: object = None
) -> CreditTopUp | None:
    """The pack is paid: add its credits, exactly once.

    The conditional UPDATE on the top-up's status decides: of concurrent or repeated events one moves
    it to succeeded and credits; the others wait on the row, find it succeeded and change nothing. A
    payment that had failed and is then paid (a retry at the provider) is credited too.

    `amounts` (the event's minor-unit amounts by field) and `currency` must be the top-up's, as for
    task payments: otherwise nothing is credited, the refusal is logged at ERROR and
    TopUpMismatch raised. `amounts=None` (our own callers) skips the check.
    """
    if amounts is not None:
        top_up = CreditTopUp.objects.filter(provider_payment_id=provider_payment_id).first()
        reason = event_money_mismatch(top_up.amount, top_up.currency, amounts, currency) if top_up else ""
        if reason:
            logger.error("top-up payment %s: success event refused, nothing credited: %s", provider_payment_id, reason)
            raise TopUpMismatch(reason)
    open_states = (CreditTopUp.Status.REQUIRES_PAYMENT, CreditTopUp.Status.FAILED)
    claimed = CreditTopUp.objects.filter(provider_payment_id=provider_payment_id, status__in=open_states).update(
        status=CreditTopUp.Status.SUCCEEDED, credited_at=timezone.now()
    )
    top_up = CreditTopUp.objects.filter(provider_payment_id=provider_payment_id).first()
    if top_up is None:
        logger.info("payment_intent.succeeded for unknown top-up payment %s ignored", provider_payment_id)
        return None
    if claimed:
        _credit_apply(
            user_id=top_up.user_id,
            delta=top_up.credits,
            kind=CreditTransaction.Kind.PURCHASE,
            reason=f"Bought the {top_up.pack} pack ({top_up.amount} {top_up.currency.upper()})",
            reference=str(top_up.id),
        )
    return top_up


def credit_top_up_apply_failed(*, provider_payment_id: str) -> None:
    """The payment failed: nothing is credited. A succeeded top-up is never rolled back by a late event."""
    CreditTopUp.objects.filter(
        provider_payment_id=provider_payment_id, status=CreditTopUp.Status.REQUIRES_PAYMENT
    ).update(status=CreditTopUp.Status.FAILED)


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
    _credit_apply(
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
    _credit_apply(
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
