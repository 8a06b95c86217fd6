"""`manage.py demo_info` (`make info`): where the running `make run` server is and how to log in, the
banner `make run` prints once web, worker and beat are ready."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from accounts.management.commands.ensure_demo_user import DEMO_EMAIL
from demo.services import AGENT_OWNER_EMAIL

RULE = "-" * 72


def checkout_path(path: Path) -> str:
    """`path` as the commands run from the checkout's root name it (var/...), else in full."""
    return str(path.relative_to(settings.BASE_DIR)) if path.is_relative_to(settings.BASE_DIR) else str(path)


class Command(BaseCommand):
    help = "Print the local server's links and the demo credentials (the `make run` banner)."

    def add_arguments(self, parser):
        parser.add_argument("--api-key", default="", help="The API key this start issued (scripts/run.sh).")

    def handle(self, *args, api_key: str, **options):
        origin = settings.PUBLIC_BASE_URL
        cert = checkout_path(settings.VAR_DIR / "dev-cert.pem")  # scripts/run.sh makes it
        lines = [
            RULE,
            f"Server:   {origin}   (self-signed certificate: curl -k, or curl --cacert {cert})",
            f"Clients:  SSL_CERT_FILE={cert} makes Python clients (httpx, openapi-python-client) trust it",
            f"Home:     {origin}/",
            f"API:      {origin}/api/v1/",
            f"Docs:     {origin}/docs   ReDoc: {origin}/redoc   Guide: {origin}/docs/guide",
            f"Admin:    {origin}/admin/",
        ]
        if settings.DEMO_INBOX_ENABLED:
            lines.append(f"Inbox:    {origin}/demo/inbox   (subscribe its /demo/inbox/<any-name> to webhooks)")
        lines += [
            f"Demo user: {DEMO_EMAIL}   password: {getattr(settings, 'DEMO_USER_PASSWORD', '') or '(not set)'}",
        ]
        if api_key:
            lines.append(f"API key:   {api_key}   (this run's; the previous run's is revoked)")
        if settings.DEMO_AGENT_ENABLED:
            lines.append(f"Demo agent owner: {AGENT_OWNER_EMAIL} (same password); its agent bids on open tasks")
        # The seller side (docs/payouts.md): the API calls need a token, so they are commands, not links.
        lines += [
            f"Sellers:  how they are paid: {origin}/docs/guide/payouts   As the demo agent owner, with",
            f'          BASE={origin}  TOKEN=<access of POST /api/v1/auth/token>  AUTH="Bearer $TOKEN"',
            '          curl -k -X POST -H "Authorization: $AUTH" $BASE/api/v1/payouts/account   (onboarding_url)',
            '          curl -k -H "Authorization: $AUTH" $BASE/api/v1/payouts/balance   (also /earnings, /payouts)',
        ]
        lines += [
            f"Payments webhook secret: {','.join(settings.PAYMENTS_WEBHOOK_SECRET)}",
            f"Secrets:  {settings.VAR_DIR / 'secrets.env'} (generated once and kept; the environment overrides)",
            "Stop:     Ctrl-C     These lines again: make info",
            RULE,
        ]
        self.stdout.write("\n".join(lines))
