from __future__ import annotations

import datetime as dt
import uuid

import factory
from django.utils import timezone

from assistant.models import Assistant, AssistantMessage, ImageGeneration
from tests.support.factories import UserFactory


class AssistantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Assistant

    user = factory.SubFactory(UserFactory)


class AssistantMessageFactory(factory.django.DjangoModelFactory):
    """Messages one second apart, in creation order."""

    class Meta:
        model = AssistantMessage

    assistant = factory.SubFactory(AssistantFactory)
    role = factory.Iterator([AssistantMessage.Role.USER, AssistantMessage.Role.ASSISTANT])
    content = factory.Sequence(lambda n: f"message {n}")
    created_at = factory.Sequence(lambda n: timezone.now() - dt.timedelta(days=1) + dt.timedelta(seconds=n))


class ImageGenerationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ImageGeneration

    user = factory.SubFactory(UserFactory)
    conversation_id = factory.LazyFunction(uuid.uuid4)
    model = "local-canvas-1"
    prompt = "a lighthouse at dawn"
    credit_cost = 1
