"""`manage.py payments_simulate PAYMENT succeeded|failed|canceled`: play the local provider's card network.

`canceled` is a held payment's authorisation expiring before capture (`payment_intent.canceled`;
docs/payouts.md#held-payments); a captured payment cannot expire.

What else happens at a provider outside our calls (docs/payouts.md#reconciliation):
    payments_simulate PAYMENT --dispute needs_response|warning_needs_response|under_review|won|lost|...
        the cardholder's bank disputes the payment (or the dispute moves on): `charge.dispute.*` events,
        `funds_withdrawn` / `funds_reinstated` moving the money and the dispute fee (PAYMENTS_LOCAL_DISPUTE_FEE)
    payments_simulate PAYMENT --dashboard-refund 20.00
        staff refund in the provider's dashboard, not through us (`charge.refunded`)
    payments_simulate po_... failed
        a paid payout comes back from the bank (`payout.failed`; the money returns to the account)

PAYMENT is the payment's `id` as the API shows it (a task's or a credit top-up's payment) or the
provider's own id (pi_..., sub_...). The event goes to PAYMENTS_LOCAL_WEBHOOK_URL: in the local profile
the running `make run` server's (PORT, else the origin the last `make run` wrote to $VAR_DIR/origin).
"""

from __future__ import annotations

import uuid
from decimal import Decimal, InvalidOperation

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.http.errors import ProviderError, ProviderUnavailable
from payments.provider_events import send_event
from payments.providers.local import DISPUTE_STATUSES, PAYMENT_OUTCOMES, SUBSCRIPTION_OUTCOMES, LocalPaymentProvider

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
            nargs="?",
            choices=sorted({*PAYMENT_OUTCOMES, CANCELED, *SUBSCRIPTION_OUTCOMES}),
            help="canceled: a held payment's authorisation expires (payment_intent.canceled); "
            "failed for a po_...: the paid payout fails",
        )
        parser.add_argument("--dispute", choices=DISPUTE_STATUSES, help="Open, move or close a dispute.")
        parser.add_argument("--dashboard-refund", metavar="AMOUNT", help="Refund AMOUNT in the dashboard.")
        parser.add_argument("--url", default=None, help="Webhook URL (default: PAYMENTS_LOCAL_WEBHOOK_URL).")
        parser.add_argument("--no-send", action="store_true", help="Change the state and print the event only.")

    def handle(self, *args, object_id, outcome, url, no_send, dispute, dashboard_refund, **options):
        if settings.PAYMENTS_PROVIDER != "local":
            raise CommandError(
                "payments_simulate works with the local payment provider only (PAYMENTS_PROVIDER=local)."
            )
        object_id = provider_object_id(object_id)
        if (outcome is None) == (dispute is None and dashboard_refund is None) or (dispute and dashboard_refund):
            raise CommandError("Give one of: an outcome, --dispute STATUS, --dashboard-refund AMOUNT.")
        try:
            events = self._simulate(LocalPaymentProvider(), object_id, outcome, dispute, dashboard_refund)
        except (ProviderError, ProviderUnavailable) as exc:
            raise CommandError(exc.message) from exc
        for event in events:
            self._send(event, url=url, no_send=no_send)

    def _simulate(self, provider, object_id, outcome, dispute, dashboard_refund) -> list:
        if dispute:
            dispute_id, events = provider.simulate_dispute(object_id, dispute)
            self.stdout.write(f"Dispute {dispute_id} on {object_id} is now {dispute}.")
            return events
        if dashboard_refund:
            try:
                amount = Decimal(dashboard_refund)
            except InvalidOperation as exc:
                raise CommandError(f"{dashboard_refund!r} is not an amount.") from exc
            payment, event = provider.simulate_dashboard_refund(object_id, amount)
            self.stdout.write(f"Payment {payment.id} refunded {amount} {payment.currency} in the dashboard.")
            return [event]
        if object_id.startswith("po_"):
            if outcome != "failed":
                raise CommandError("A payout takes: failed.")
            payout, event = provider.simulate_payout_failure(object_id)
            self.stdout.write(f"Payout {payout.id} ({payout.amount} {payout.currency}) failed.")
            return [event]
        return [self._settle(provider, object_id, outcome)]

    def _settle(self, provider, object_id, outcome):
        if object_id.startswith("sub_"):
            if outcome not in SUBSCRIPTION_OUTCOMES:
                raise CommandError(f"A subscription takes one of: {', '.join(SUBSCRIPTION_OUTCOMES)}.")
            subscription, event = provider.simulate_subscription(object_id, outcome)
            self.stdout.write(f"Subscription {subscription.id} is now {subscription.status}.")
            return event
        if outcome not in (*PAYMENT_OUTCOMES, CANCELED):
            raise CommandError(f"A payment takes one of: {', '.join((*PAYMENT_OUTCOMES, CANCELED))}.")
        if outcome == CANCELED:
            with transaction.atomic():  # it locks the provider's payment row
                payment, event = provider.simulate_cancel(object_id)
        else:
            payment, event = provider.simulate_payment(object_id, outcome)
        self.stdout.write(f"Payment {payment.id} ({payment.amount} {payment.currency}) is now {payment.status}.")
        return event

    def _send(self, event, *, url, no_send) -> None:
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
