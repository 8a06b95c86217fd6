"""The local payment provider's hosted checkout (`/checkout/{session}`): what the page shows and what paying does.

Paying (or declining) settles the local payment or subscription exactly as `manage.py payments_simulate`
does (`simulate_payment()` / `simulate_subscription()`), marks the session used, commits, and only then
sends the signed provider event to our own webhook: no row stays locked while we wait for the webhook,
which runs in this same server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.http.errors import NotFound, ProviderError, ProviderUnavailable
from payments.models import LocalCheckoutSession
from payments.money import from_minor
from payments.provider_events import SignedEvent, send_event
from payments.providers.base import PaymentStatus, SubscriptionStatus
from payments.providers.local import LocalPaymentProvider

logger = logging.getLogger(__name__)


class CheckoutState:
    OPEN = "open"
    USED = "used"  # paid or declined already (here or through payments_simulate)
    EXPIRED = "expired"
    CANCELLED = "cancelled"  # the merchant cancelled the payment / the subscription ended


class Choice:
    PAY = "pay"
    DECLINE = "decline"  # the payer refuses to pay
    CARD_DECLINED = "card_declined"  # testing: the payer's card is declined

    ALL = (PAY, DECLINE, CARD_DECLINED)


@dataclass(frozen=True)
class CheckoutPage:
    session: LocalCheckoutSession
    state: str
    kind: str  # "payment" | "subscription"
    description: str
    payee: str
    amount: Decimal | None = None
    currency: str = ""
    plan: str = ""
    customer_email: str = ""
    object_status: str = ""

    @property
    def back_url(self) -> str:
        """Where the page links back to: `success_url` once paid, else `cancel_url` (either may be empty)."""
        paid = self.object_status in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED, SubscriptionStatus.ACTIVE)
        if self.session.status == LocalCheckoutSession.Status.COMPLETED and self.session.outcome != Choice.PAY:
            paid = False
        return self.session.success_url if paid else self.session.cancel_url


def _page(session: LocalCheckoutSession) -> CheckoutPage:
    state = CheckoutState.OPEN
    if session.payment_id:
        payment = session.payment
        if session.status == LocalCheckoutSession.Status.COMPLETED:
            state = CheckoutState.USED
        elif payment.status == PaymentStatus.CANCELLED:
            state = CheckoutState.CANCELLED
        elif payment.status != PaymentStatus.REQUIRES_PAYMENT:
            state = CheckoutState.USED
        elif session.expires_at <= timezone.now():
            state = CheckoutState.EXPIRED
        return CheckoutPage(
            session=session,
            state=state,
            kind="payment",
            description=payment.description or "Payment",
            payee=session.payee,
            amount=from_minor(payment.amount_minor, payment.currency),
            currency=payment.currency.upper(),
            object_status=payment.status,
        )
    subscription = session.subscription
    if session.status == LocalCheckoutSession.Status.COMPLETED:
        state = CheckoutState.USED
    elif subscription.status == SubscriptionStatus.CANCELED:
        state = CheckoutState.CANCELLED
    elif session.expires_at <= timezone.now():
        state = CheckoutState.EXPIRED
    return CheckoutPage(
        session=session,
        state=state,
        kind="subscription",
        description=f"Subscription to the {subscription.plan} plan, billed every 30 days",
        payee=session.payee,
        plan=subscription.plan,
        customer_email=subscription.customer_email,
        object_status=subscription.status,
    )


def checkout_page(*, session_id: str) -> CheckoutPage:
    session = LocalCheckoutSession.objects.select_related("payment", "subscription").filter(id=session_id).first()
    if session is None:
        raise NotFound()
    return _page(session)


@dataclass(frozen=True)
class CheckoutResult:
    page: CheckoutPage
    applied: bool  # False: the session was not open, nothing changed
    delivered: bool = False  # our webhook accepted the provider event


def checkout_complete(*, session_id: str, choice: str) -> CheckoutResult:
    """Pay or decline on the page. A session that is not open changes nothing (`applied` False)."""
    if choice not in Choice.ALL:
        raise ValueError(f"choice must be one of {', '.join(Choice.ALL)}")
    event = _settle(session_id=session_id, choice=choice)
    page = checkout_page(session_id=session_id)
    if event is None:
        return CheckoutResult(page=page, applied=False)
    return CheckoutResult(page=page, applied=True, delivered=_deliver(event))


@transaction.atomic
def _settle(*, session_id: str, choice: str) -> SignedEvent | None:
    session = (
        LocalCheckoutSession.objects.select_for_update(of=("self",))
        .select_related("payment", "subscription")
        .filter(id=session_id)
        .first()
    )
    if session is None:
        raise NotFound()
    if _page(session).state != CheckoutState.OPEN:
        return None
    provider = LocalPaymentProvider()
    paid = choice == Choice.PAY
    try:
        if session.payment_id:
            _, event = provider.simulate_payment(session.payment_id, "succeeded" if paid else "failed")
        else:
            _, event = provider.simulate_subscription(session.subscription_id, "paid" if paid else "payment_failed")
    except ProviderError:
        logger.info("checkout %s: the provider object cannot be settled any more", session.pk)
        return None
    LocalCheckoutSession.objects.filter(pk=session.pk).update(
        status=LocalCheckoutSession.Status.COMPLETED, outcome=choice, completed_at=timezone.now()
    )
    return event


def _deliver(event: SignedEvent) -> bool:
    """Send the event to our webhook, as payments_simulate does; a failure is logged (re-send with the command)."""
    try:
        result = send_event(event, url=settings.PAYMENTS_LOCAL_WEBHOOK_URL)
    except ProviderUnavailable:
        logger.exception("checkout: event %s could not be sent to our webhook", event.event_id)
        return False
    if result.status_code >= 300:
        logger.error("checkout: our webhook answered %s to event %s", result.status_code, event.event_id)
        return False
    return True
