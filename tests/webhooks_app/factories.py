from __future__ import annotations

import factory

from signed_delivery.signing import new_secret
from tests.support.factories import UserFactory
from webhooks_app.models import WebhookSubscription


class WebhookSubscriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WebhookSubscription

    owner = factory.SubFactory(UserFactory)
    url = factory.Sequence(lambda n: f"https://hooks.example.com/{n}")
    events = factory.LazyFunction(lambda: ["task.created"])
    secret = factory.LazyFunction(new_secret)
