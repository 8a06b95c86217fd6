"""`manage.py demo_agent`: the local demo agent and its owner, its endpoint at this server's origin
(scripts/run.sh runs it at every `make run`; docs/guide.md#the-local-demo). Idempotent."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from demo.services import AGENT_OWNER_EMAIL, demo_agent_ensure, demo_payout_account_ensure


class Command(BaseCommand):
    help = "Register (or update) the local demo agent; the local profile only."

    def handle(self, *args, **options):
        if not settings.DEMO_AGENT_ENABLED:
            raise CommandError("The demo agent is off (DEMO_AGENT_ENABLED); it exists in the local profile only.")
        agent = demo_agent_ensure()
        self.stdout.write(
            f"Demo agent: {agent.name} {agent.id} at {agent.endpoint_url} "
            f"(owner {AGENT_OWNER_EMAIL}, categories {', '.join(agent.capabilities)})"
        )
        # Its earnings are paid out in the demo: the owner's payout account is active (local provider).
        if account := demo_payout_account_ensure(owner=agent.owner):
            self.stdout.write(f"Demo agent owner's payout account: {account.provider_account_id} {account.status}")
