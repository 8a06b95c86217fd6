"""The query filters of the delivery list (core.api.filters; docs/decisions.md#list-filters)."""

from __future__ import annotations

import django_filters

from core.api.filters import FilterSet
from webhooks_app.models import WebhookDelivery, WebhookDeliveryStatus


class DeliveryFilter(FilterSet):
    status = django_filters.ChoiceFilter(choices=WebhookDeliveryStatus.choices)

    class Meta:
        model = WebhookDelivery
        fields = []
