"""`manage.py payments_simulate PAYMENT succeeded|failed|canceled`: play the local provider's card network.

`canceled` is a held payment's authorisation expiring before capture (`payment_intent.canceled`;
docs/payouts.md#held-payments); a captured payment cannot expire.

PAYMENT is the payment's `id` as the API shows it (a task's or a credit top-up's payment) or the
provider's own id (pi_..., sub_...). The event goes to PAYMENTS_LOCAL_WEBHOOK_URL: in the local profile
the running `make run` server's (PORT, else the origin the last `make run` wrote to $VAR_DIR/origin).
"""

from __future__ import annotations

import uuid

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.errors import ProviderError, ProviderUnavailable
from payments.events import send_event
from payments.providers.local import PAYMENT_OUTCOMES, SUBSCRIPTION_OUTCOMES, LocalPaymentProvider

CANCELED = "canceled"  # Stripe's spelling, as in `payment_intent.canceled`


class Command(BaseCommand):
    help = (
        "Local payment provider: settle a payment (pi_... succeeded|failed), expire a held (authorised, "
        "not captured) one (pi_... canceled), or bill a subscription (sub_... paid|payment_failed|updated|"
        "deleted), then send the signed provider event to our webhook."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "object_id",
            metavar="PAYMENT_ID",
            help="The payment's id as the API shows it, or the provider's pi_... (or sub_...)",
        )
        parser.add_argument(
            "outcome",
            choices=sorted({*PAYMENT_OUTCOMES, CANCELED, *SUBSCRIPTION_OUTCOMES}),
            help="canceled: a held payment's authorisation expires (payment_intent.canceled)",
        )
        parser.add_argument("--url", default=None, help="Webhook URL (default: PAYMENTS_LOCAL_WEBHOOK_URL).")
        parser.add_argument("--no-send", action="store_true", help="Change the state and print the event only.")

    def handle(self, *args, object_id, outcome, url, no_send, **options):
        if settings.PAYMENTS_PROVIDER != "local":
            raise CommandError(
                "payments_simulate works with the local payment provider only (PAYMENTS_PROVIDER=local)."
            )
        provider = LocalPaymentProvider()
        object_id = provider_object_id(object_id)
        try:
            if object_id.startswith("sub_"):
                if outcome not in SUBSCRIPTION_OUTCOMES:
                    raise CommandError(f"A subscription takes one of: {', '.join(SUBSCRIPTION_OUTCOMES)}.")
                subscription, event = provider.simulate_subscription(object_id, outcome)
                self.stdout.write(f"Subscription {subscription.id} is now {subscription.status}.")
            else:
                if outcome not in (*PAYMENT_OUTCOMES, CANCELED):
                    raise CommandError(f"A payment takes one of: {', '.join((*PAYMENT_OUTCOMES, CANCELED))}.")
                if outcome == CANCELED:
                    with transaction.atomic():  # it locks the provider's payment row
                        payment, event = provider.simulate_cancel(object_id)
                else:
                    payment, event = provider.simulate_payment(object_id, outcome)
                self.stdout.write(
                    f"Payment {payment.id} ({payment.amount} {payment.currency}) is now {payment.status}."
                )
        except (ProviderError, ProviderUnavailable) as exc:
            raise CommandError(exc.message) from exc

        self.stdout.write(f"Event {event.event_id} ({event.event_type}).")
        if no_send:
            self.stdout.write(event.body.decode())
            return
        target = url or settings.PAYMENTS_LOCAL_WEBHOOK_URL
        try:
            result = send_event(event, url=target)
        except ProviderUnavailable as exc:
            raise CommandError(f"{exc.message} Re-run the command to send a fresh event.") from exc
        self.stdout.write(f"POST {target} → {result.status_code} {result.text}")
        if result.status_code >= 300:
            raise CommandError(f"The webhook answered {result.status_code}.")


def provider_object_id(given: str) -> str:
    """The provider's id for `given`: itself, or, for an API payment `id` (a UUID), the `provider_payment_id`
    of the app's payment with that id. Every model with a `provider_payment_id` is asked (the task
    marketplace's payments, credit top-ups), so this app names none of them."""
    try:
        key = uuid.UUID(given)
    except ValueError:
        return given
    for model in apps.get_models():
        fields = {field.name for field in model._meta.get_fields()}
        if "provider_payment_id" in fields and model._meta.pk.get_internal_type() == "UUIDField":
            found = model.objects.filter(pk=key).values_list("provider_payment_id", flat=True).first()
            if found:
                return found
    raise CommandError(f"No payment has the id {given}.")
