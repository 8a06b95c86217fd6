"""The local provider's hosted onboarding page (`/payouts/onboarding/{link}`), like its checkout
(payments.checkout): the owner enters a payout name and a test bank account, which activates the
account. Our own record is updated at once, the same way the `account.updated` event then sent to our
webhook updates it (so the event finds nothing more to do)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from core.http.errors import NotFound, ProviderUnavailable
from payments.models import LocalConnectObject
from payments.provider_events import send_event
from payments.providers.local import LocalPaymentProvider, account_event_object
from payments.services.accounts import payout_account_apply

logger = logging.getLogger(__name__)

_IBAN = re.compile(r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$")
_ROUTING = re.compile(r"^[0-9]{9}$")
_ACCOUNT = re.compile(r"^[0-9]{4,17}$")


class OnboardingInvalid(ValueError):
    """What the owner entered is not a payout name and a bank account; str(exc) says why."""


def iban_valid(value: str) -> bool:
    """ISO 13616: the shape, then mod-97 of the rearranged digits is 1."""
    if not _IBAN.match(value):
        return False
    moved = value[4:] + value[:4]
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


def routing_valid(value: str) -> bool:
    """An ABA routing number: nine digits whose 3-7-1 weighted sum is a multiple of 10."""
    if not _ROUTING.match(value):
        return False
    digits = [int(d) for d in value]
    return sum(w * d for w, d in zip([3, 7, 1] * 3, digits, strict=True)) % 10 == 0


def bank_account_parse(*, iban: str = "", routing_number: str = "", account_number: str = "") -> str:
    """The bank account as one string (an IBAN, or `routing/account`), or OnboardingInvalid."""
    iban = re.sub(r"\s+", "", iban or "").upper()
    if iban:
        if not iban_valid(iban):
            raise OnboardingInvalid("That IBAN is not valid (e.g. DE89 3704 0044 0532 0130 00).")
        return iban
    routing_number, account_number = (routing_number or "").strip(), (account_number or "").strip()
    if not routing_number and not account_number:
        raise OnboardingInvalid("Enter an IBAN, or a routing number and an account number.")
    if not routing_valid(routing_number):
        raise OnboardingInvalid("That routing number is not valid (nine digits, e.g. 110000000).")
    if not _ACCOUNT.match(account_number):
        raise OnboardingInvalid("An account number is 4 to 17 digits.")
    return f"{routing_number}/{account_number}"


@dataclass(frozen=True)
class OnboardingPage:
    link: LocalConnectObject
    state: str  # open | used | expired
    email: str

    @property
    def back_url(self) -> str:
        return self.link.data.get("return_url" if self.state == "used" else "refresh_url", "")


def onboarding_page(*, link_id: str) -> OnboardingPage:
    link = LocalConnectObject.objects.filter(id=link_id, kind=LocalConnectObject.Kind.ACCOUNT_LINK).first()
    if link is None:
        raise NotFound()
    account = LocalConnectObject.objects.filter(id=link.account_id).first()
    state = "open"
    if link.status != "open":
        state = "used"
    elif link.expires_at <= timezone.now():
        state = "expired"
    return OnboardingPage(link=link, state=state, email=account.data.get("email", "") if account else "")


def onboarding_complete(*, link_id: str, display_name: str, bank_account: str) -> OnboardingPage:
    """Activate the account behind the link (OnboardingInvalid for a bad name; ProviderError when the link
    is used or expired), record it, then send `account.updated` to our webhook (logged if it fails)."""
    display_name = " ".join((display_name or "").split())
    if not 2 <= len(display_name) <= 100:
        raise OnboardingInvalid("Enter the name payouts are made to (2 to 100 characters).")
    _, event = LocalPaymentProvider().complete_onboarding(
        link_id=link_id, display_name=display_name, bank_account=bank_account
    )
    link = LocalConnectObject.objects.get(id=link_id)
    account = LocalConnectObject.objects.get(id=link.account_id)
    payout_account_apply(provider_account_id=account.id, obj=account_event_object(account))
    try:
        result = send_event(event, url=settings.PAYMENTS_LOCAL_WEBHOOK_URL)
        if result.status_code >= 300:
            logger.error("onboarding: our webhook answered %s to event %s", result.status_code, event.event_id)
    except ProviderUnavailable:
        logger.warning("onboarding: event %s could not be sent to our webhook", event.event_id, exc_info=True)
    return onboarding_page(link_id=link_id)
