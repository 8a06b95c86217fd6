import contextlib

from django.core.management.base import BaseCommand
from django.core.servers.basehttp import get_internal_wsgi_application

from core.ops.tlsserver import serve


class Command(BaseCommand):
    help = "Serve the API over HTTPS for local use (plain HTTP on the same port gets 403 https_required)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8443)
        parser.add_argument("--cert", required=True, help="PEM certificate file.")
        parser.add_argument("--key", required=True, help="PEM private key file.")

    def handle(self, *args, host, port, cert, key, **options):
        self.stdout.write(f"Serving https://{host}:{port}/ (docs at /docs, health at /health). Ctrl-C stops.")
        with contextlib.suppress(KeyboardInterrupt):
            serve(get_internal_wsgi_application(), host, port, cert, key)
