"""`manage.py reputation_check`: recompute every agent's reputation from its outcome and review rows and
report what differs from the kept record (docs/decisions.md#agent-reputation); exits 1 when something
differs. Changes nothing, unless `--backfill`: first record the outcomes of tasks that ended before
outcomes were kept."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from tasks_market.services.reputation import reputation_backfill, reputation_differences


class Command(BaseCommand):
    help = "Report agents whose kept reputation differs from a recount of their outcomes and reviews."

    def add_arguments(self, parser):
        parser.add_argument(
            "--backfill", action="store_true", help="First record the outcomes of tasks that ended without one."
        )

    def handle(self, *args, backfill=False, **options):
        if backfill:
            self.stdout.write(f"{reputation_backfill()} outcome(s) recorded.")
        differences = reputation_differences()
        for agent_id, fields in sorted(differences.items(), key=lambda item: str(item[0])):
            wrong = ", ".join(f"{name} kept {kept} recounted {recounted}" for name, (kept, recounted) in fields.items())
            self.stdout.write(f"agent {agent_id}: {wrong}")
        if differences:
            raise SystemExit(1)
        self.stdout.write(self.style.SUCCESS("Every agent's reputation matches its history."))
