"""The local demo (docs/guide.md#the-local-demo): a demo agent that bids on open tasks in its categories (told of
each by its saved search), takes the work it wins and delivers a result written by the local language model,
and a webhook inbox.

The agent acts through the services a real agent's owner goes through (agent_register, bid_create,
delivery_submit): the demo exercises the marketplace, it does not bypass it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from standardwebhooks import Webhook, WebhookVerificationError

from accounts.models import User
from accounts.services import user_create
from assistant.providers.llm import get_llm_provider
from core.http.errors import InvalidState, NotFound
from demo.models import InboxMessage
from payments.models import LocalConnectObject, PayoutAccount
from payments.providers.base import PayoutAccountStatus
from payments.providers.local import LocalPaymentProvider, account_event_object
from payments.services.accounts import payout_account_apply, payout_account_start
from tasks_market.models import Agent, Bid, SavedSearch, Task, TaskCategory, TaskStatus
from tasks_market.services.agents import agent_register, agent_secrets, agent_update_endpoint
from tasks_market.services.bids import bid_create
from tasks_market.services.deliveries import delivery_submit
from tasks_market.services.errors import BidExists
from tasks_market.services.saved_searches import saved_search_create
from webhooks_app.models import WebhookSubscription
from webhooks_app.services import signing_secrets

logger = logging.getLogger(__name__)

AGENT_OWNER_EMAIL = "demo-agent@example.com"
AGENT_NAME = "demo-copywriter"
AGENT_PATH = "/demo/agent/tasks"
AGENT_CATEGORIES = [TaskCategory.CONTENT, TaskCategory.MARKETING, TaskCategory.RESEARCH, TaskCategory.OTHER]
# The demo agent asks for this share of the task's budget.
BID_SHARE = Decimal("0.9")
DEMO_BANK_ACCOUNT = "DE89370400440532013000"  # a well-known test IBAN; the local provider keeps its last 4
INBOX_KEEP = 200  # messages kept per inbox token and owner; older ones are deleted as new ones arrive
SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


def agent_endpoint() -> str:
    return settings.PUBLIC_BASE_URL + AGENT_PATH


def demo_agent_ensure() -> Agent:
    """The demo agent and its owner (the demo password), its endpoint at this server's current origin."""
    owner = User.objects.filter(email=AGENT_OWNER_EMAIL).first()
    if owner is None:
        # The operator's demo account: verified (it onboards a payout account), its sign-up credits granted.
        owner = user_create(email=AGENT_OWNER_EMAIL, password=settings.DEMO_USER_PASSWORD, email_verified=True)
    agent = Agent.objects.filter(owner=owner, name=AGENT_NAME).first()
    if agent is None:
        agent = agent_register(
            owner=owner,
            name=AGENT_NAME,
            endpoint_url=agent_endpoint(),
            description="Writes copy with the local language model. Served by this server (make run).",
            capabilities=[str(category) for category in AGENT_CATEGORIES],
        )
    elif agent.endpoint_url != agent_endpoint():  # `make run` on another PORT
        agent = agent_update_endpoint(owner=owner, agent_id=agent.id, endpoint_url=agent_endpoint())
    if not SavedSearch.objects.filter(agent=agent).exists():
        # It hears of each new task in its categories by a signed `task.matched` (docs/decisions.md#saved-searches).
        saved_search_create(owner=owner, agent_id=agent.id, category=[str(c) for c in AGENT_CATEGORIES])
    return agent


def demo_payout_account_ensure(*, owner: User) -> PayoutAccount | None:
    """The demo agent's owner gets an active payout account on the local provider, onboarded as its hosted
    page would, so that the demo's earnings are paid out (docs/payouts.md#payout-accounts). Once: an
    active account is left as it is. None with another provider (a real one onboards by hand)."""
    if settings.PAYMENTS_PROVIDER != "local":
        return None
    account = PayoutAccount.objects.filter(owner=owner).first()
    if account is not None and account.status == PayoutAccountStatus.ACTIVE and account.payouts_enabled:
        return account
    started = payout_account_start(owner=owner)
    link_id = started.onboarding_url.rstrip("/").rsplit("/", 1)[1]
    with transaction.atomic():
        LocalPaymentProvider().complete_onboarding(
            link_id=link_id, display_name="Demo agent owner", bank_account=DEMO_BANK_ACCOUNT
        )
        row = LocalConnectObject.objects.get(id=started.account.provider_account_id)
        return payout_account_apply(provider_account_id=row.id, obj=account_event_object(row))


def demo_agent() -> Agent | None:
    return Agent.objects.select_related("owner").filter(owner__email=AGENT_OWNER_EMAIL, name=AGENT_NAME).first()


def demo_agent_bid(*, task_id: UUID | str | None = None) -> int:
    """Bid on open tasks in the agent's categories that it has not bid on (one task, or every one of
    them); returns the number of bids placed."""
    agent = demo_agent()
    if agent is None:
        return 0
    tasks = Task.objects.filter(status=TaskStatus.OPEN, category__in=agent.capabilities).exclude(poster=agent.owner)
    tasks = tasks.exclude(id__in=Bid.objects.filter(agent=agent).values("task_id"))  # one bid per task, ever
    if task_id is not None:
        tasks = tasks.filter(id=task_id)
    placed = 0
    for task in tasks.order_by("created_at")[:50]:
        amount = (task.budget_amount * BID_SHARE).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
        try:
            bid_create(
                user=agent.owner,
                task_id=task.id,
                agent_id=agent.id,
                amount=max(amount, Decimal("0.01")),
                currency=task.budget_currency,
                proposal=f"The demo agent writes this with the local language model, within the hour: {task.title}",
                eta_hours=1,
            )
        except (BidExists, InvalidState, NotFound) as exc:  # a twin job bid first, or the task moved on
            logger.info("demo agent: no bid on task %s (%s)", task.id, type(exc).__name__)
            continue
        placed += 1
    return placed


def demo_agent_verify(*, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """Check a dispatch as any agent would: the Standard Webhooks signature with the agent's secret(s).
    Returns the message; raises WebhookVerificationError."""
    agent = demo_agent()
    if agent is None:
        raise WebhookVerificationError("The demo agent is not registered.")
    for secret in agent_secrets(agent):
        try:
            return Webhook(secret).verify(body, headers)
        except WebhookVerificationError:
            continue
    raise WebhookVerificationError("No signature matches the demo agent's secret.")


def demo_agent_deliver(*, task_id: UUID | str) -> bool:
    """Do the dispatched task: the local language model writes the result, submitted as the agent's owner
    would. False when there is nothing to submit (already submitted, or the task moved on)."""
    agent = demo_agent()
    task = Task.objects.filter(id=task_id).first()
    if agent is None or task is None:
        return False
    reply = get_llm_provider().complete(
        system=f"You are {AGENT_NAME}, an agent on a task marketplace. Do the task below.",
        messages=[{"role": "user", "content": f"{task.title}\n\n{task.description}"}],
    )
    text = f"# {task.title}\n\n{reply.text}\n"
    artefact = {"name": "result.md", "content_type": "text/markdown", "text": text}
    data = text.encode()
    artefact |= {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    try:
        delivery_submit(user=agent.owner, task_id=task.id, artefacts=[artefact], notes=f"Written by {reply.model}.")
    except (InvalidState, NotFound):
        return False
    return True


# --- The webhook inbox ---------------------------------------------------------------------------------


def inbox_url(token: str) -> str:
    """The URL a subscription or an agent names to be delivered to the inbox `token`: this server's origin."""
    return f"{settings.PUBLIC_BASE_URL}/demo/inbox/{token}"


@dataclass(frozen=True)
class InboxReceiver:
    """A subscription or an agent whose URL is exactly an inbox's: the one whose secret may sign for it."""

    owner_id: UUID
    secrets: list[str]
    subscription_id: UUID | None = None
    agent_id: UUID | None = None


def inbox_receivers(token: str) -> list[InboxReceiver]:
    """Every subscription and agent whose URL is exactly this inbox's (not one that merely ends the same
    way: another origin is another receiver), newest first."""
    url = inbox_url(token)
    subscriptions = WebhookSubscription.objects.filter(url=url).order_by("-created_at", "-id")
    agents = Agent.objects.filter(endpoint_url=url).order_by("-created_at", "-id")
    return [
        *(InboxReceiver(owner_id=s.owner_id, secrets=signing_secrets(s), subscription_id=s.id) for s in subscriptions),
        *(InboxReceiver(owner_id=a.owner_id, secrets=agent_secrets(a), agent_id=a.id) for a in agents),
    ]


def _signed_by(receivers: list[InboxReceiver], *, body: bytes, headers: dict[str, str]) -> InboxReceiver | None:
    for receiver in receivers:
        for secret in receiver.secrets:
            try:
                Webhook(secret).verify(body, headers)
            except WebhookVerificationError:
                continue
            return receiver
    return None


@transaction.atomic
def inbox_receive(*, token: str, body: bytes, headers: dict[str, str]) -> InboxMessage:
    """Record one POST with the receiver whose secret verifies its signature, among the subscriptions and
    agents whose URL is exactly this inbox's; that receiver's owner is the one user shown it
    (docs/decisions.md#the-local-webhook-inbox). `signature_verified` is None when there is no such
    receiver, False when none of their secrets verifies it."""
    receivers = inbox_receivers(token)
    signer = _signed_by(receivers, body=body, headers=headers)
    text = body.decode("utf-8", errors="replace")
    try:
        event_type = str(json.loads(text).get("type", ""))[:100]
    except (ValueError, AttributeError):
        event_type = ""
    message = InboxMessage.objects.create(
        token=token,
        headers=headers,
        body=text[:100_000],
        event_type=event_type,
        signature_verified=(signer is not None) if receivers else None,
        subscription_id=signer.subscription_id if signer else None,
        agent_id=signer.agent_id if signer else None,
        owner_id=signer.owner_id if signer else None,
    )
    # Kept per owner, so that deliveries nobody signed (or another owner's) never push out an owner's own.
    kept = InboxMessage.objects.filter(token=token, owner_id=message.owner_id).order_by("-received_at")
    stale = kept.values_list("id", flat=True)[INBOX_KEEP:]
    InboxMessage.objects.filter(id__in=list(stale)).delete()
    return message


def inbox_messages(*, owner: User, token: str | None = None, limit: int = 100) -> list[InboxMessage]:
    """What the inbox received that is `owner`'s to see: the messages signed with the secret of one of their
    subscriptions or agents (every inbox, or the one `token`), newest first."""
    messages = InboxMessage.objects.filter(owner=owner)
    if token is not None:
        messages = messages.filter(token=token)
    return list(messages.order_by("-received_at")[:limit])
