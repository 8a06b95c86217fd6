"""The credit ledger: every change of a user's balance is a CreditTransaction (grants, adjustments, top-ups
paid through payments, image generation's spending and refunds)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from assistant.models import CreditBalance, CreditTopUp, CreditTransaction
from core.http.errors import InsufficientCredits, NotFound
from payments.money import event_money_mismatch
from payments.providers import get_payment_provider
from payments.sessions import link_checkout_session

logger = logging.getLogger(__name__)

# --- Credits --------------------------------------------------------------------------------------


def credit_apply(
    *, user_id: uuid.UUID, delta: int, kind: str, reason: str, reference: str = "", actor: User | None = None
) -> CreditTransaction:
    """Change a balance by `delta` and record it. Call inside a transaction.

    A debit is one conditional UPDATE (`credits >= cost`): concurrent debits serialise on the row,
    and the balance can never go below zero. An account without a balance row has 0: a debit finds no
    row, a credit makes it first.
    """
    balances = CreditBalance.objects.filter(user_id=user_id)
    if delta < 0:
        balances = balances.filter(credits__gte=-delta)
    else:
        CreditBalance.objects.bulk_create([CreditBalance(user_id=user_id)], ignore_conflicts=True)
    if balances.update(credits=F("credits") + delta) == 0:
        raise InsufficientCredits()
    # Our UPDATE holds the row lock until commit, so this reads exactly the balance we left.
    balance = CreditBalance.objects.filter(user_id=user_id).values_list("credits", flat=True).get()
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
    return credit_apply(
        user_id=user.pk, delta=delta, kind=CreditTransaction.Kind.ADJUSTMENT, reason=reason.strip(), actor=actor
    )


@transaction.atomic
def credits_grant_signup(*, user: User, amount: int | None = None) -> CreditTransaction | None:
    """The credits a new account starts with, written to its ledger as a grant (none when 0): SIGNUP_CREDITS,
    or `amount` for an account an operator makes (`create_user --credits`, the demo users). Registered
    with accounts.registry, which calls it when the account is created verified or verified later."""
    amount = settings.SIGNUP_CREDITS if amount is None else amount
    if amount <= 0:
        return None
    return credit_apply(
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
    # A client's retry of the request is the Idempotency-Key header's business (core.http.idempotency); this key
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
        credit_apply(
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
