from django.apps import AppConfig
from django.conf import settings


class DemoConfig(AppConfig):
    """The local profile's demo agent and webhook inbox (docs/guide.md#the-local-demo), with `demo_agent` and
    `demo_info` (`make info`): installed by config/settings/local.py (and the tests' settings) only, never by
    the base settings production builds on, so production has neither its `InboxMessage` table nor its
    routes (tests/demo/test_production_installs_no_demo_model.py). The demo data set, `seed_demo`, is the
    `demo_seed` app, which every profile installs. It works through the domain apps' services, so it lives
    apart from all of them rather than in `core` (see docs/architecture.md#apps)."""

    name = "demo"
    verbose_name = "Local demo"

    def ready(self) -> None:
        # The demo agent hears of a new task by its saved search (a signed `task.matched` at its endpoint,
        # demo.views.agent_tasks), as any agent may; the beat's `demo.agent_bid` catches any it missed.
        if settings.DEMO_AGENT_ENABLED or settings.DEMO_INBOX_ENABLED:
            from celery.signals import beat_init, worker_ready

            from demo.signals import mark_ready

            # `make run` prints its banner once web, worker and beat are ready (scripts/run.sh).
            worker_ready.connect(mark_ready("worker"), weak=False)
            beat_init.connect(mark_ready("beat"), weak=False)
