"""Compare every kept count with a fresh COUNT and report the drift; fixes it unless --check
(core.db.counters; docs/decisions.md#lists)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from core.db.counters import counters_reconcile


class Command(BaseCommand):
    help = "Recount every kept count (core.db.counters), report drift, and fix it (--check: report only, exit 1)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="Report only; exit 1 on any drift.")

    def handle(self, *args, check: bool = False, **options):
        report = counters_reconcile(fix=not check)
        for name, row in report.items():
            if "drifted" not in row:
                self.stdout.write(f"{name}: kept {row['kept']}, actual {row['actual']}, drift {row['drift']}")
                continue
            # A grouped count: one line for the family, then one per key that drifted (not one per key).
            self.stdout.write(
                f"{name}.*: {row['keys']} keys, kept {row['kept']}, actual {row['actual']}, "
                f"{len(row['drifted'])} keys drifted by {row['drift']}"
            )
            for key, drifted in row["drifted"].items():
                self.stdout.write(
                    f"  {key}: kept {drifted['kept']}, actual {drifted['actual']}, drift {drifted['drift']}"
                )
        if check and any(row["drift"] for row in report.values()):
            raise CommandError("kept counts drifted")
