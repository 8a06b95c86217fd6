import re

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.mail import newest_mail_to
from accounts.verification import SUBJECT

FILE_BACKEND = "accounts.mail.FilePerMessageBackend"
TOKEN = re.compile(r'"token": "([^"]+)"')


class Command(BaseCommand):
    help = (
        "Print the token of the newest verification mail to ADDRESS, read from `make run`'s mail folder "
        "($VAR_DIR/mail). Local profile only: elsewhere the mail went to a real mailbox."
    )

    def add_arguments(self, parser):
        parser.add_argument("address")

    def handle(self, *args, address, **options):
        if settings.EMAIL_BACKEND != FILE_BACKEND:
            raise CommandError(f"Mail is not written to files here (EMAIL_BACKEND is not {FILE_BACKEND}).")
        body = newest_mail_to(settings.EMAIL_FILE_PATH, address, SUBJECT)
        found = TOKEN.search(body or "")
        if found is None:
            raise CommandError(f"No verification mail to {address} in {settings.EMAIL_FILE_PATH} (yet).")
        self.stdout.write(found.group(1))
