"""The assistant's conversation: a message in, the language model's reply out."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assistant.domain.image_models import IMAGE_MODELS, default_model
from assistant.models import Assistant, AssistantMessage, CreditTransaction, ImageGeneration
from assistant.providers.llm import ChatMessage, get_llm_provider
from assistant.selectors import credit_balance
from assistant.services.credits import credit_apply
from brands.selectors.brands import brands_of
from core.ops.metrics import CREDITS_SPENT, business_count

logger = logging.getLogger(__name__)

HISTORY_FOR_CONTEXT = 20  # earlier messages the language model sees
BRANDS_FOR_CONTEXT = 5  # the user's newest brands the language model is told about
REPLY_MAX_TOKENS = 800

SYSTEM_PROMPT = (
    "You are the marketing assistant of the Brand Marketing and Task Platform. Answer briefly and concretely. "
    "You can explain image generation (AllModelChat, paid in credits), the ad budget simulator, and the free "
    "creative brief and tagline tools. Use the facts below about the user's account and brands; never invent "
    "account data."
)


# --- Assistant ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    user_message: AssistantMessage
    assistant_message: AssistantMessage


def assistant_message_send(*, user: User, content: str, attachments: list[dict[str, Any]] | None = None) -> Exchange:
    """Store the user's message and the assistant's reply. If the language model fails, nothing is stored.

    A message costs the provider's `credit_cost` (docs/decisions.md#what-a-message-costs): taken before the
    model is called (InsufficientCredits, nothing called, when the balance is short), given back if it fails.
    """
    attachments = attachments or []
    received_at = timezone.now()
    history = list(
        AssistantMessage.objects.filter(assistant__user=user).order_by("-created_at", "-id")[:HISTORY_FOR_CONTEXT]
    )
    prompt = content + "".join(f"\n[Attached {a['type']}: {a['url']}]" for a in attachments)
    messages: list[ChatMessage] = [{"role": m.role, "content": m.content} for m in reversed(history)]
    messages.append({"role": "user", "content": prompt})

    provider = get_llm_provider()
    charge = _message_charge(user=user, cost=provider.credit_cost, model=getattr(provider, "model", ""))
    try:
        reply = provider.complete(
            system=_system_prompt(user, message_count=len(history)), messages=messages, max_tokens=REPLY_MAX_TOKENS
        )
    except Exception:
        if charge is not None:
            _message_refund(user=user, charge=charge)
        raise

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


@transaction.atomic
def _message_charge(*, user: User, cost: int, model: str) -> CreditTransaction | None:
    if cost <= 0:
        return None
    charge = credit_apply(
        user_id=user.pk,
        delta=-cost,
        kind=CreditTransaction.Kind.ASSISTANT_MESSAGE,
        reason=f"A message to the assistant ({model})",
        reference=str(uuid.uuid4()),  # the refund, if any, names it
    )
    business_count(CREDITS_SPENT, cost)
    return charge


@transaction.atomic
def _message_refund(*, user: User, charge: CreditTransaction) -> None:
    credit_apply(
        user_id=user.pk,
        delta=-charge.delta,
        kind=CreditTransaction.Kind.ASSISTANT_REFUND,
        reason="The language model failed; the message's credits are given back",
        reference=charge.reference,
    )


def assistant_delete(*, user: User) -> None:
    """Delete the user's assistant and its whole history. Nothing to delete is fine."""
    Assistant.objects.filter(user=user).delete()


def _brands_context(user: User) -> str:
    brands = brands_of(user).values_list("name", "domain", "industry")[:BRANDS_FOR_CONTEXT]
    described = [
        f"{name[:80]} ({', '.join(part[:80] for part in (domain, industry) if part)})"
        if domain or industry
        else name[:80]
        for name, domain, industry in brands
    ]
    return "; ".join(described) or "none yet (POST /api/v1/brands adds one)"


def _system_prompt(user: User, *, message_count: int) -> str:
    default = default_model()
    models = ", ".join(
        f"{m.identifier} ({m.credit_cost} credit{'s' if m.credit_cost != 1 else ''}"
        + ("" if m.available else ", unavailable")
        + ")"
        for m in IMAGE_MODELS
    )
    # What the model needs to help, and no more: no address, name or other personal data of the user's
    # (docs/decisions.md#what-the-language-model-is-told); brands are business data the user gave us.
    facts = {
        "brands": _brands_context(user),
        "credits": credit_balance(user=user),
        "default image model": f"{default.identifier} ({default.credit_cost} credits per image)",
        "image models": models,
        "images generated": ImageGeneration.objects.filter(user=user, status=ImageGeneration.Status.SUCCEEDED).count(),
        "messages so far": message_count,
    }
    return SYSTEM_PROMPT + "\n\nContext:\n" + "\n".join(f"- {k}: {v}" for k, v in facts.items())
