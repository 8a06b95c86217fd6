"""Sellers' payout accounts at the provider (docs/payouts.md#payout-accounts): onboarding and the
provider's account events."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from core.http.errors import EmailUnverified, NotFound
from payments.models import PayoutAccount
from payments.providers import get_payment_provider
from payments.providers.base import PayoutAccountStatus
from payments.providers.stripe import payout_account_status

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Onboarding:
    account: PayoutAccount
    onboarding_url: str


def payout_account_start(*, owner, return_url: str = "", refresh_url: str = "", country: str = "") -> Onboarding:
    """Create the owner's payout account at the provider (once: the key is the owner's) in `country` (ISO
    3166-1 alpha-2; PAYOUT_ACCOUNT_DEFAULT_COUNTRY when not given; an existing account keeps its own) and
    a fresh onboarding link. Starting again while onboarding (or to update details) answers a new link. 403
    `email_unverified` until the owner's address is verified: money goes only to a proven account
    (docs/decisions.md#identity-and-authentication)."""
    if not owner.email_verified:
        raise EmailUnverified()
    provider = get_payment_provider()
    account = PayoutAccount.objects.filter(owner=owner).first()
    if account is None:
        country = (country or settings.PAYOUT_ACCOUNT_DEFAULT_COUNTRY).upper()
        created = provider.create_payout_account(
            email=owner.mailing_address,  # the domain as IDNA 2008 A-labels (accounts.addresses)
            country=country,
            metadata={"owner_id": str(owner.pk)},
            idempotency_key=f"payout-account:{owner.pk}",
        )
        try:
            with transaction.atomic():
                account = PayoutAccount.objects.create(
                    owner=owner,
                    provider=provider.name,
                    provider_account_id=created.id,
                    status=created.status,
                    payouts_enabled=created.payouts_enabled,
                    country=country,
                    display_name=created.display_name,
                )
        except IntegrityError:  # a concurrent start recorded the same account first
            account = PayoutAccount.objects.get(owner=owner)
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    url = provider.create_onboarding_link(
        account_id=account.provider_account_id,
        return_url=return_url or f"{base}/docs/guide",
        refresh_url=refresh_url or return_url or f"{base}/docs/guide",
    )
    return Onboarding(account=account, onboarding_url=url)


def payout_account_for(*, owner) -> PayoutAccount:
    account = PayoutAccount.objects.filter(owner=owner).first()
    if account is None:
        raise NotFound("No payout account yet: POST /api/v1/payouts/account starts onboarding.")
    return account


def account_status_from_event(obj: dict[str, Any]) -> tuple[str, bool]:
    """Stripe's account object (the local provider's events have its shape) → (our status,
    payouts_enabled), by the one rule the Stripe adapter reads accounts with (a new account's past-due
    requirements are onboarding, not a restriction; see payments.providers.stripe)."""
    return payout_account_status(obj), obj.get("payouts_enabled") is True


@transaction.atomic
def payout_account_apply(*, provider_account_id: str, obj: dict[str, Any]) -> PayoutAccount | None:
    """`account.updated`: the account's state as the provider reports it (an unknown account is ignored)."""
    account = PayoutAccount.objects.select_for_update().filter(provider_account_id=provider_account_id).first()
    if account is None:
        logger.info("account.updated for unknown account %s ignored", provider_account_id)
        return None
    status, payouts_enabled = account_status_from_event(obj)
    requirements = obj.get("requirements") if isinstance(obj.get("requirements"), dict) else {}
    due = requirements.get("currently_due")
    profile = obj.get("business_profile") if isinstance(obj.get("business_profile"), dict) else {}
    account.status, account.payouts_enabled = status, payouts_enabled
    account.requirements = [str(item) for item in due] if isinstance(due, list) else []
    if isinstance(profile.get("name"), str) and profile["name"]:
        account.display_name = profile["name"][:200]
    account.save(update_fields=["status", "payouts_enabled", "requirements", "display_name", "updated_at"])
    if status == PayoutAccountStatus.RESTRICTED:
        logger.warning("payout account %s is restricted: %s", provider_account_id, account.requirements)
    return account


# The capabilities a payout needs (Stripe names `transfers`; `payouts` where a provider names it).
PAYOUT_CAPABILITIES = ("transfers", "payouts")


@transaction.atomic
def payout_account_restrict(*, provider_account_id: str, reason: str) -> PayoutAccount | None:
    """The provider can no longer pay the account (a payout capability inactive, or the owner disconnected
    our platform): restricted, payouts stopped until `account.updated` says otherwise; earnings keep
    accruing (docs/payouts.md#payout-accounts). An unknown account is ignored."""
    account = PayoutAccount.objects.select_for_update().filter(provider_account_id=provider_account_id).first()
    if account is None:
        logger.info("%s for unknown account %s ignored", reason, provider_account_id)
        return None
    account.status, account.payouts_enabled = PayoutAccountStatus.RESTRICTED, False
    account.requirements = sorted({*account.requirements, reason})
    account.save(update_fields=["status", "payouts_enabled", "requirements", "updated_at"])
    logger.warning("payout account %s is restricted: %s", provider_account_id, reason)
    return account


def capability_apply(*, provider_account_id: str, capability: str, status: str) -> PayoutAccount | None:
    """`capability.updated`: a payout capability that is not active restricts the account; an active one
    changes nothing here (the `account.updated` that follows says what the account is)."""
    if capability not in PAYOUT_CAPABILITIES or status == "active":
        return None
    return payout_account_restrict(provider_account_id=provider_account_id, reason=f"capability:{capability}:{status}")


def payable(account: PayoutAccount | None) -> bool:
    return account is not None and account.status == PayoutAccountStatus.ACTIVE and account.payouts_enabled
