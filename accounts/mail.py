"""`make run`'s e-mail: every message a file of its own, its path logged (see docs/operations.md#e-mail)."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from django.core.mail.backends.filebased import EmailBackend
from django.utils import timezone

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
