"""`manage.py ledger_check`: prove the ledger's invariants (docs/payouts.md#the-ledger); exit 1 listing
the offending rows when one breaks."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from payments.ledger_check import ledger_problems
from payments.models import LedgerEntry


class Command(BaseCommand):
    help = "Check that every ledger entry balances and every task's and owner's money adds up."

    def handle(self, *args, **options):
        problems = ledger_problems()
        if problems:
            for problem in problems:
                self.stderr.write(problem)
            raise CommandError(f"ledger check failed: {len(problems)} problem(s)", returncode=1)
        self.stdout.write(f"ledger check passed: {LedgerEntry.objects.count()} entries balanced")
