from __future__ import annotations

from collections import Counter

from django.core.management.base import BaseCommand

from scrapers.services import PollOutcome, snapshots_poll


class Command(BaseCommand):
    help = "One polling pass over running scraping snapshots (what the beat job does every 10 s)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--all", action="store_true", help="Poll every running snapshot now, not only those whose turn has come."
        )
        parser.add_argument("--limit", type=int, default=500, help="At most this many snapshots (default 500).")

    def handle(self, *args, all: bool, limit: int, **options):
        counts: Counter[str] = Counter()

        def report(outcome: PollOutcome) -> None:
            counts[outcome.outcome] += 1
            snapshot = outcome.snapshot
            line = (
                f"{snapshot.provider}:{snapshot.snapshot_id} {outcome.outcome} "
                f"(provider: {snapshot.provider_status or '-'}, records {snapshot.records_count}, "
                f"errors {snapshot.errors_count})"
            )
            if outcome.detail:
                line += f" - {outcome.detail}"
            style = {"ready": self.style.SUCCESS, "failed": self.style.ERROR, "unreachable": self.style.WARNING}
            self.stdout.write(style.get(outcome.outcome, str)(line))

        outcomes = snapshots_poll(due_only=not all, limit=limit, budget_seconds=None, on_outcome=report)
        summary = ", ".join(f"{counts[k]} {k}" for k in ("running", "ready", "failed", "unreachable") if counts[k])
        self.stdout.write(f"Polled {len(outcomes)} snapshot(s)" + (f": {summary}." if summary else "."))
