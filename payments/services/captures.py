"""The poster's money in the ledger (docs/payouts.md#the-ledger): captured, and given back while held."""

from __future__ import annotations

import logging
from decimal import Decimal

from core.http.errors import ProviderError, ProviderUnavailable
from payments import ledger
from payments.providers import get_payment_provider

logger = logging.getLogger(__name__)


def ledger_captured(*, source: str, currency: str, amount: Decimal, provider_ref: str = "") -> None:
    """The poster's payment for `source` was captured: the platform holds it, in its balance at the provider."""
    ledger.ledger_post(
        kind="captured",
        source=source,
        key=f"captured:{source}",
        currency=currency,
        lines=[(ledger.CAPTURED, amount), (ledger.HELD, -amount), (ledger.CASH, amount), (ledger.OUTSIDE, -amount)],
        provider_ref=provider_ref,
    )


def ledger_refunded(*, source: str, currency: str, amount: Decimal, key: str, provider_ref: str = "") -> None:
    """Held money for `source` went back to the poster (a dispute's refund), out of the platform's balance."""
    ledger.ledger_post(
        kind="refunded",
        source=source,
        key=f"refunded:{key}",
        currency=currency,
        lines=[(ledger.HELD, amount), (ledger.REFUNDS, -amount), (ledger.OUTSIDE, amount), (ledger.CASH, -amount)],
        provider_ref=provider_ref,
    )


def refund_ref(*, payment_id: str, idempotency_key: str = "") -> str:
    """The provider's id of the refund just made of `payment_id` under `idempotency_key` (a whole refund's is
    `refund:<payment id>`), for the ledger's `provider_ref`, so the reconciliation matches the refund
    (docs/payouts.md#reconciliation); "" when the provider has none (a held payment's authorisation given back).
    A provider call: with no transaction open. The refund is made whatever this answers: a lookup that fails
    answers "" (logged), and the reconciliation then lists the entry as naming no provider object."""
    try:
        found = get_payment_provider().find_refund(
            payment_id=payment_id, idempotency_key=idempotency_key or f"refund:{payment_id}"
        )
    except (ProviderError, ProviderUnavailable):
        logger.warning("the refund of %s was made but could not be looked up", payment_id, exc_info=True)
        return ""
    return found.id if found is not None else ""


def refund_once(*, payment_id: str, amount: Decimal | None = None, idempotency_key: str = "") -> str:
    """Refund `payment_id` (in full when `amount` is None) and answer the refund's id (for `provider_ref`).

    A provider forgets an idempotency key after about a day (docs/payouts.md#retries-after-a-day), and a
    refund is retried when staff finish applying a resolution or click again, maybe days later: the refund
    made under the key is looked up first, and only made when there is none. A provider call: with no
    transaction open."""
    provider = get_payment_provider()
    key = idempotency_key or f"refund:{payment_id}"
    found = provider.find_refund(payment_id=payment_id, idempotency_key=key)
    if found is not None:
        return found.id
    if amount is None:
        provider.refund_payment(payment_id)
    else:
        provider.refund_payment_partially(payment_id=payment_id, amount=amount, idempotency_key=key)
    return refund_ref(payment_id=payment_id, idempotency_key=key)
