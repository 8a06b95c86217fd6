"""Background work: the Celery broker (Redis in production, SQLite under VAR_DIR for `make run`), how tasks
are published and acknowledged, and the beat's schedule, each entry with why and how often."""

from __future__ import annotations

from datetime import timedelta

from config.settings.domain import DELIVERIES_SWEEP_SECONDS, PAYOUT_SCHEDULE
from config.settings.env import REDIS_SOCKET_TIMEOUTS, REDIS_URL, VAR_DIR, env, env_renamed

# The embedded default (`make run`, no REDIS_URL): kombu's SQLAlchemy transport on a SQLite file under
# VAR_DIR. A message is one row written in one transaction, so a reader never sees half of it (the
# filesystem transport's files could be read before they were filled; docs/decisions.md, "Embedded broker").
# Its transport class (config/celery_broker.py) polls ten times a second instead of kombu's once.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or REDIS_URL
EMBEDDED_BROKER = not CELERY_BROKER_URL
if EMBEDDED_BROKER:
    CELERY_BROKER_URL = f"sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}"
    CELERY_BROKER_TRANSPORT = "config.celery_broker:EmbeddedBrokerTransport"
SQL_BROKER = EMBEDDED_BROKER or CELERY_BROKER_URL.startswith(("sqla+", "sqlalchemy+"))
if SQL_BROKER:
    # Publishers (web, beat) and the consumer share the file: wait for its lock rather than fail at once.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"connect_args": {"timeout": 30}}
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, **REDIS_SOCKET_TIMEOUTS}
# The worker's remote-control mailbox (pidbox) and events need a fanout exchange, which the SQLAlchemy
# transport lacks; nothing here uses them, and without them the worker writes nothing outside VAR_DIR.
CELERY_WORKER_ENABLE_REMOTE_CONTROL = not SQL_BROKER
# Publishing (e.g. a job queued on commit) while the broker is down: two quick retries, about one second
# in all, then the error goes to the caller, which logs it; the beat's sweeps queue the work again
# (docs/operations.md#when-a-dependency-goes-away). Celery's default would retry for longer on every request.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.25, "interval_max": 0.5}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only after it ran, and a worker that dies mid-task hands it back:
# tasks are written to be safe to run twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"  # as TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# With Redis (every deployment past `make run`) beat is celery-redbeat: the schedule's state lives in Redis
# and a beat schedules only while it holds a Redis lock, so any number of beat processes may run and one
# takes over when the active one dies (docs/operations.md#beat-failover). The lock is extended on every
# tick (at most BEAT_MAX_INTERVAL_SECONDS apart) and expires BEAT_LOCK_TIMEOUT_SECONDS after the holder's last
# tick; a standby tries to take it every BEAT_MAX_INTERVAL_SECONDS, so a takeover needs at most the sum of the two.
# `make run` (no Redis) keeps Celery's file scheduler under VAR_DIR.
if REDIS_URL:
    CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler"
    CELERY_REDBEAT_REDIS_URL = REDIS_URL
    CELERY_REDBEAT_REDIS_OPTIONS = dict(REDIS_SOCKET_TIMEOUTS)
    CELERY_REDBEAT_KEY_PREFIX = env.str("BEAT_KEY_PREFIX", default="redbeat:")
    # Named beat_max_interval before Celery 5.7.
    CELERY_BEAT_MAX_LOOP_INTERVAL = env_renamed("BEAT_MAX_INTERVAL_SECONDS", "BEAT_MAX_INTERVAL", int, 5)
    CELERY_REDBEAT_LOCK_TIMEOUT = env_renamed("BEAT_LOCK_TIMEOUT_SECONDS", "BEAT_LOCK_TIMEOUT", int, 30)
CELERY_BEAT_SCHEDULE = {
    # Refresh tokens are blacklisted on every rotation; expired ones are dead weight. Daily is plenty.
    "accounts.flush_expired_tokens": {
        "task": "accounts.tasks.flush_expired_tokens",
        "schedule": timedelta(hours=24),
    },
    # Teams whose billing period ended after an unsubscribe become cancelled, and a closed account's team
    # whose cancel at the provider was not recorded (its job lost) is asked again. Hourly is fine-grained
    # enough for billing periods of a month; each team is claimed by a conditional UPDATE.
    "teams.cancel_ended_subscriptions": {
        "task": "teams.tasks.cancel_ended_subscriptions",
        "schedule": timedelta(hours=1),
    },
    # Outbound webhook retries ride on countdown messages; a lost message or a worker that died
    # mid-attempt would strand a delivery. Every minute, overdue and stuck deliveries are queued again.
    "webhooks_app.sweep_webhook_deliveries": {
        "task": "webhooks_app.tasks.sweep_webhook_deliveries",
        "schedule": timedelta(minutes=1),
    },
    # An image generation whose web process died mid-call stays pending with its credits taken;
    # after 15 minutes it is failed and refunded. Every 10 minutes keeps the wait short and cheap.
    "assistant.refund_stale_image_generations": {
        "task": "assistant.tasks.refund_stale_image_generations",
        "schedule": timedelta(minutes=10),
    },
    # Running scraping snapshots are polled at their provider, each on its own backoff (next_poll_at:
    # 10 s doubling to 5 min) until ready, failed or past SCRAPER_SNAPSHOT_DEADLINE_SECONDS. The beat only
    # finds the due ones (one indexed query), so every 10 s is cheap and keeps new snapshots current.
    "scrapers.poll_snapshots": {
        "task": "scrapers.tasks.poll_snapshots",
        "schedule": timedelta(seconds=10),
    },
    # A preflight publication lives PUBLICATION_PREFLIGHT_MINUTES (30); cancelling the expired ones
    # every minute keeps `status` truthful within a minute of `expires_at`. Idempotent.
    "brands.expire_preflights": {
        "task": "brands.tasks.expire_preflights",
        "schedule": timedelta(minutes=1),
    },
    # Confirmed publications whose message was lost (or never sent: the broker was down) are queued
    # again after PUBLICATION_REQUEUE_AFTER_SECONDS. Duplicate runs are no-ops.
    "brands.requeue_publications": {
        "task": "brands.tasks.requeue_publications",
        "schedule": timedelta(minutes=1),
    },
    # Research audits lost with the broker or a worker are queued again, a bounded number of times, then
    # failed with the reason (docs/decisions.md#audit-sweep). SKIP LOCKED: two beats sweep each item once.
    # Connected accounts' tokens expiring within SOCIAL_TOKEN_REFRESH_WINDOW_SECONDS (a week) are refreshed, those
    # that cannot be are marked `expiring`/`token_expired` (docs/decisions.md#token-refresh-and-health). Hourly is
    # plenty against a week's window; each row is written by one conditional UPDATE, so a duplicate run is harmless.
    "brands.refresh_connection_tokens": {
        "task": "brands.tasks.refresh_connection_tokens",
        "schedule": timedelta(hours=1),
    },
    "brands.requeue_lost_audits": {
        "task": "brands.tasks.requeue_lost_audits",
        "schedule": timedelta(minutes=5),
    },
    # Recurring research: the audits (competitor discovery included) of brands whose working team asks for
    # them every `orchestrator_cadence.research_every_hours` (docs/decisions.md#team-cadence).
    "brands.queue_recurring_research": {
        "task": "brands.tasks.queue_recurring_research",
        "schedule": timedelta(minutes=15),
    },
    # Task deliveries: gives back claims of workers that died mid-dispatch, re-queues dispatches whose
    # message was lost, and re-sends dispatches stuck past DELIVERY_STUCK_AFTER_SECONDS (each at most 3 times).
    # It also judges bids whose judge job was lost. Every 5 minutes is well inside the 30-minute stuck
    # window; each step claims or is idempotent, so overlapping runs are safe.
    "tasks_market.sweep_deliveries": {
        "task": "tasks_market.tasks.sweep_deliveries",
        "schedule": timedelta(seconds=DELIVERIES_SWEEP_SECONDS),
    },
    # Logs that grow with traffic (inbound webhook deliveries, refused ones above all, outbound webhook
    # attempts, agent dispatch attempts) would otherwise grow without bound: anyone may POST to the
    # public webhook. Hourly keeps each batch small; the retentions below say how long rows live.
    "core.prune_logs": {
        "task": "core.tasks.prune_logs",
        "schedule": timedelta(hours=1),
    },
    # Idempotency-Key records live 24 h (core.http.idempotency); lookups ignore expired ones, so this only
    # keeps the table small. Hourly deletes at most an hour's worth of keys in one indexed DELETE.
    # Kept list counts (core.db.counters) are exact by construction; daily, a COUNT proves it and fixes any
    # drift (a restore, a manual edit with triggers off). One COUNT per count, off-peak cost only.
    "core.reconcile_counters": {
        "task": "core.tasks.reconcile_counters",
        "schedule": timedelta(hours=24),
    },
    "core.prune_idempotency_keys": {
        "task": "core.tasks.prune_idempotency_keys",
        "schedule": timedelta(hours=1),
    },
    # Paying sellers (docs/payouts.md#jobs); every job claims under a row lock or is keyed, so a
    # duplicate run is a no-op. Review windows are hours long: every 10 minutes is precise enough.
    "tasks_market.release_reviewed_deliveries": {
        "task": "tasks_market.tasks.release_reviewed_deliveries",
        "schedule": timedelta(minutes=10),
    },
    # Payments held for approval (from before capture-on-payment) are captured before they expire.
    "payments.capture_held_payments": {
        "task": "payments.tasks.capture_held_payments",
        "schedule": timedelta(hours=1),
    },
    "payments.settle_earnings": {"task": "payments.tasks.settle_earnings", "schedule": timedelta(minutes=5)},
    "payments.run_payouts": {
        "task": "payments.tasks.run_payouts",
        "schedule": timedelta(hours=1 if PAYOUT_SCHEDULE == "hourly" else 24),
    },
    # The ledger's invariants, daily: a break is logged at ERROR (manage.py ledger_check shows the rows).
    "payments.check_ledger": {"task": "payments.tasks.check_ledger", "schedule": timedelta(hours=24)},
    # The ledger's money group against the provider (docs/payouts.md#reconciliation), daily: ERROR per difference.
    "payments.reconcile": {"task": "payments.tasks.reconcile", "schedule": timedelta(hours=24)},
}
