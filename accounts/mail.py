"""`make run`'s e-mail: every message a file of its own, its path logged (see docs/operations.md#e-mail)."""

from __future__ import annotations

import email
import logging
import uuid
from email import policy
from pathlib import Path

from django.core.mail.backends.filebased import EmailBackend
from django.utils import timezone

from accounts.addresses import normalise_email

logger = logging.getLogger(__name__)


class FilePerMessageBackend(EmailBackend):
    """Django's file backend writes one file per connection; this one writes one per message."""

    def send_messages(self, email_messages):
        sent = 0
        for message in email_messages or []:
            path = Path(self.file_path) / f"{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}.eml"
            path.write_bytes(message.message().as_bytes())
            logger.info("e-mail to %s written to %s", ", ".join(message.recipients()), path)
            sent += 1
        return sent


def newest_mail_to(folder: str | Path, address: str, subject: str) -> str | None:
    """The body of the newest message in a FilePerMessageBackend folder to `address` (any spelling of it,
    accounts.addresses) with this subject, or None."""
    key = normalise_email(address)
    paths = sorted(Path(folder).glob("*.eml"), key=lambda path: (path.stat().st_mtime_ns, path.name), reverse=True)
    for path in paths:
        message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
        recipients = [normalise_email(str(to.addr_spec)) for to in message["To"].addresses] if message["To"] else []
        if key in recipients and message["Subject"] == subject:
            return message.get_body(preferencelist=("plain",)).get_content()
    return None
