"""`manage.py payouts_run`: one pass of the payout beat job now (docs/payouts.md#jobs): settle what is
due, finish unfinished payouts and recoveries, pay every owed owner (in batches), recover unowed money."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from payments.services.earnings import earnings_settle
from payments.services.payouts import payouts_run


class Command(BaseCommand):
    help = "Settle due earnings and pay out available money now (the beat does it on PAYOUT_SCHEDULE)."

    def handle(self, *args, **options):
        settled = earnings_settle()
        paid = payouts_run()
        self.stdout.write(self.style.SUCCESS(f"{settled} earning(s) became available; {paid} payout(s) made."))
