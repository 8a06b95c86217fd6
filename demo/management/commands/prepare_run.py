"""`manage.py prepare_run` (scripts/run.sh): what `make run` does before its processes start, in one process
instead of four (each start of Django costs a second or two): migrate, the demo user with a fresh API key,
the demo agent. Prints the banner (`demo_info`) on standard output for run.sh to show once everything is
ready; what the steps say goes to standard error, on the terminal at once."""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from accounts.management.commands.ensure_demo_user import demo_user_ensure


class Command(BaseCommand):
    help = "Migrate, create the demo user (a fresh API key) and the demo agent; print the make run banner."

    def handle(self, *args, **options):
        self.stderr.write(f"make run: migrating the database ({settings.VAR_DIR})")
        call_command("migrate", interactive=False, verbosity=0)
        self.stderr.write("make run: the demo user, and the demo agent (docs/guide.md#the-local-demo)")
        _, api_key = demo_user_ensure()
        call_command("demo_agent", stdout=self.stderr)
        call_command("demo_info", api_key=api_key, stdout=self.stdout)
