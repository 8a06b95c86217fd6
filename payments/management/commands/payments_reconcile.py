"""`manage.py payments_reconcile [--since 2025-01-31T00:00:00Z | --days N]`: compare the ledger's books with
the payment provider (payments.reconcile; docs/payouts.md#reconciliation). Prints its progress and each
difference; exits 1 when there is any, 0 when the books match."""

from __future__ import annotations

import sys
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.http.errors import ProviderError, ProviderUnavailable
from payments.reconcile import reconcile


class Command(BaseCommand):
    help = (
        "Compare the ledger's money (platform:cash, each seller's connected account, every movement) with "
        "the payment provider's balances and balance transactions; exit 1 on any difference."
    )

    def add_arguments(self, parser):
        window = parser.add_mutually_exclusive_group()
        window.add_argument("--since", help="Only movements from this time (ISO 8601); balances of sellers only.")
        window.add_argument("--days", type=int, help="Only movements of the last N days.")

    def handle(self, *args, since, days, **options):
        start = None
        if since:
            start = parse_datetime(since)
            if start is None or start.tzinfo is None:
                raise CommandError(f"--since {since!r} is not an ISO 8601 time with a zone.")
        elif days is not None:
            start = timezone.now() - timedelta(days=days)
        try:
            differences = reconcile(since=start, progress=self.stdout.write)
        except (ProviderError, ProviderUnavailable) as exc:
            raise CommandError(f"The provider could not be read: {exc.message}") from exc
        for difference in differences:
            self.stdout.write(f"DIFFERENCE {difference}")
        if differences:
            self.stderr.write(f"{len(differences)} difference(s) between the books and the provider.")
            sys.exit(1)
        self.stdout.write("The books match the provider.")
