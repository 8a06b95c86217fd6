"""`manage.py ledger_check`: prove the ledger's invariants (docs/payouts.md#the-ledger) and that its money
matches the provider (the reconciliation, docs/payouts.md#reconciliation; `--no-reconcile` leaves the
provider out); exit 1 listing the offending rows when one breaks."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from core.http.errors import ProviderError, ProviderUnavailable
from payments.ledger_check import ledger_problems
from payments.models import LedgerEntry
from payments.reconcile import reconcile


class Command(BaseCommand):
    help = (
        "Check that every ledger entry balances, every task's and owner's money adds up, and the books match "
        "the payment provider."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-reconcile", action="store_true", help="Only the ledger's own invariants; do not read the provider."
        )

    def handle(self, *args, no_reconcile: bool, **options):
        problems = ledger_problems()
        if not no_reconcile:
            try:
                problems += [f"reconciliation: {difference}" for difference in reconcile(progress=self.stdout.write)]
            except (ProviderError, ProviderUnavailable) as exc:
                problems.append(f"reconciliation: the provider could not be read: {exc.message}")
        if problems:
            for problem in problems:
                self.stderr.write(problem)
            raise CommandError(f"ledger check failed: {len(problems)} problem(s)", returncode=1)
        checked = "balanced" if no_reconcile else "balanced, and the books match the provider"
        self.stdout.write(f"ledger check passed: {LedgerEntry.objects.count()} entries {checked}")
