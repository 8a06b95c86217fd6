from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    """Money moving through a provider: the provider interface, the local provider and its checkout,
    Stripe, signed provider events, and the registry domain apps react to settled payments through
    (see docs/architecture.md#payments)."""

    name = "payments"
    verbose_name = "Payments"

    def ready(self) -> None:
        from payments import (
            checks,
            dispute_handlers,  # noqa: F401 - the card disputes' handlers, first: they read the dispute's status
            payment_handlers,  # noqa: F401 - registers the sellers' money event handlers
        )

        # Registers the deploy check; a deployment that runs the local provider on purpose says so in
        # its log on every start.
        checks.warn_if_local_payments_allowed()
