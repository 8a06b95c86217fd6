"""`manage.py prepare_run` (scripts/run.sh): what `make run` does before its processes start, in one process
instead of four (each start of Django costs a second or two): migrate, the demo user with a fresh API key,
the demo agent. Prints the banner (`demo_info`) on standard output for run.sh to show once everything is
ready; what the steps say goes to standard error, on the terminal at once."""

from __future__ import annotations

import re
from io import StringIO

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

API_KEY_LINE = re.compile(r"^API key:\s*(\S+)", re.MULTILINE)


class Command(BaseCommand):
    help = "Migrate, create the demo user (a fresh API key) and the demo agent; print the make run banner."

    def handle(self, *args, **options):
        self.stderr.write(f"make run: migrating the database ({settings.VAR_DIR})")
        call_command("migrate", interactive=False, verbosity=0)
        self.stderr.write("make run: the demo user, and the demo agent (docs/guide.md#the-local-demo)")
        issued = StringIO()
        call_command("ensure_demo_user", stdout=issued)
        found = API_KEY_LINE.search(issued.getvalue())
        if found is None:
            raise CommandError("ensure_demo_user printed no API key")
        call_command("demo_agent", stdout=self.stderr)
        call_command("demo_info", api_key=found.group(1), stdout=self.stdout)
