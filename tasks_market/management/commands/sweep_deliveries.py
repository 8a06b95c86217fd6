from __future__ import annotations

from django.core.management.base import BaseCommand

from tasks_market.services.dispatch import deliveries_sweep


class Command(BaseCommand):
    help = "One pass of the delivery sweep (the beat job, every 5 minutes): stale claims, stuck and lost dispatches."

    def handle(self, *args, **options):
        labels = {
            "released": "claim of a dead worker given back",
            "retried": "stuck dispatch sent again",
            "requeued": "lost dispatch queued again",
        }

        def report(kind: str, delivery_id) -> None:
            self.stdout.write(f"delivery {delivery_id}: {labels[kind]}")

        result = deliveries_sweep(progress=report)
        self.stdout.write(
            self.style.SUCCESS(
                f"Swept deliveries: {result.released} released, {result.retried} retried, {result.requeued} requeued."
            )
        )
