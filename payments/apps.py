from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    """Money moving through a provider: the provider interface, the local provider and its checkout,
    Stripe, signed provider events, and the registry domain apps react to settled payments through
    (see docs/architecture.md#payments)."""

    name = "payments"
    verbose_name = "Payments"
