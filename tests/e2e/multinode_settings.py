"""Settings of the multi-node test cluster (scripts/multinode.py): production's, plus what a test needs to watch.

- Two test-only tasks (tests/e2e/multinode_tasks.py): a probe the beat sends every second, and a slow
  task a worker node can be killed in the middle of.
- A request may ask its node to hold its answer after its work committed (tests/e2e/multinode_hold.py), so
  that the web node kill drill can kill a node at that moment.
- A dead worker's unacknowledged message comes back after 8 s instead of an hour (looked for every
  second), so the redelivery to the other node can be watched; the slow task runs well inside that.
Beat's lock timings come from the environment (BEAT_LOCK_TIMEOUT_SECONDS, BEAT_MAX_INTERVAL_SECONDS), as in production.
"""

from __future__ import annotations

from datetime import timedelta

from config.settings.production import *  # noqa: F403
from config.settings.production import CELERY_BEAT_SCHEDULE, CELERY_BROKER_TRANSPORT_OPTIONS, MIDDLEWARE

MIDDLEWARE = ["tests.e2e.multinode_hold.HoldAnswer", *MIDDLEWARE]  # outermost: everything else has run
CELERY_IMPORTS = ["tests.e2e.multinode_tasks"]
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "visibility_timeout": 8,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
CELERY_BEAT_SCHEDULE = {
    **CELERY_BEAT_SCHEDULE,
    "multinode.probe": {"task": "multinode.probe", "schedule": timedelta(seconds=1)},
}
