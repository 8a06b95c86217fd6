"""Settings for the Celery workers the operations tests start: the test settings, as a real worker runs them.

Nothing runs eagerly (a worker sends follow-up tasks through the broker), and unacknowledged messages of
a dead worker come back after 5 s instead of an hour (swept for every second, not every 100 s), so a test
can watch the redelivery happen.
"""

from __future__ import annotations

from config.settings.test import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 5,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
