from __future__ import annotations

import hashlib
from datetime import timedelta
from decimal import Decimal

import factory
from django.utils import timezone

from payments.models import Payment, PaymentStatus
from signed_delivery.signing import new_secret
from tasks_market.models import Agent, Bid, BidJudgement, Delivery, DeliveryStatus, DeliverySubmission, Task, TaskStatus
from tests.support.factories import UserFactory


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Agent {n}")
    description = "Writes and researches."
    endpoint_url = "https://agents.example.com/hook"
    capabilities = factory.LazyFunction(lambda: ["writing"])
    signing_secret = factory.LazyFunction(new_secret)


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    poster = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Write launch copy {n}")
    description = "Write the launch announcement for our analytics dashboard."
    budget_amount = Decimal("200.00")
    budget_currency = "usd"
    deadline = factory.LazyFunction(lambda: timezone.now() + timedelta(days=7))
    category = "content"
    requirements = factory.LazyFunction(lambda: ["Under 300 words"])


class BidFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Bid
        skip_postgeneration_save = True

    task = factory.SubFactory(TaskFactory)
    agent = factory.SubFactory(AgentFactory)
    bidder = factory.SelfAttribute("agent.owner")
    amount = Decimal("150.00")
    currency = "usd"
    proposal = "I will write launch copy for the analytics dashboard."
    eta_hours = 24
    judgement = factory.RelatedFactory("tests.tasks_market.factories.BidJudgementFactory", factory_related_name="bid")


class BidJudgementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = BidJudgement


class PaymentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Payment

    class Params:
        bid = factory.SubFactory(BidFactory)
        task = factory.SelfAttribute("bid.task")

    source = factory.LazyAttribute(lambda payment: f"task:{payment.task.pk}")
    reference = factory.LazyAttribute(lambda payment: f"bid:{payment.bid.pk}")
    payer = factory.SelfAttribute("task.poster")
    payee = factory.SelfAttribute("bid.bidder")
    provider = "local"
    provider_payment_id = factory.Sequence(lambda n: f"pi_test{n:020d}")
    amount = factory.SelfAttribute("bid.amount")
    currency = "usd"
    status = PaymentStatus.SUCCEEDED
    client_secret = "secret"


def delivering_task(*, poster=None, agent=None, delivery_status=DeliveryStatus.DISPATCHED, task_status=None, **extra):
    """A paid task with its delivery in `delivery_status` (built directly, no dispatch)."""
    task = TaskFactory(**({"poster": poster} if poster else {}))
    bid = BidFactory(task=task, **({"agent": agent} if agent else {}), status="selected")
    PaymentFactory(bid=bid, task=task)
    if task_status is None:
        task_status = {
            DeliveryStatus.SUBMITTED: TaskStatus.IN_REVIEW,
            DeliveryStatus.APPROVED: TaskStatus.COMPLETED,
            DeliveryStatus.DISPUTED: TaskStatus.DISPUTED,
        }.get(delivery_status, TaskStatus.DELIVERING)
    Task.objects.filter(pk=task.pk).update(status=task_status, selected_bid=bid)
    now = timezone.now()
    defaults = {"dispatched_at": now} if delivery_status == DeliveryStatus.DISPATCHED else {"next_attempt_at": now}
    delivery = Delivery.objects.create(task=task, bid=bid, agent=bid.agent, status=delivery_status, **defaults | extra)
    if delivery_status in (DeliveryStatus.SUBMITTED, DeliveryStatus.APPROVED, DeliveryStatus.DISPUTED):
        DeliverySubmission.objects.create(delivery=delivery, number=1, notes="Done.", submitted_by=bid.bidder)
    task.refresh_from_db()
    return task, delivery


def text_artefact(text: str = "Launch copy: measure what matters.") -> dict:
    data = text.encode()
    return {
        "name": "copy.md",
        "content_type": "text/markdown",
        "text": text,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
