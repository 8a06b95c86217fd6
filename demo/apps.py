from django.apps import AppConfig
from django.conf import settings


class DemoConfig(AppConfig):
    """The demo data set (`manage.py seed_demo`), and the local profile's demo agent and webhook inbox
    (docs/guide.md#the-local-demo). It works through every domain app's services, so it lives apart from
    all of them rather than in `core` (see docs/architecture.md#apps)."""

    name = "demo"
    verbose_name = "Demo data"

    def ready(self) -> None:
        if settings.DEMO_AGENT_ENABLED:
            from django.db.models.signals import post_save

            from demo.signals import task_created_bid
            from tasks_market.models import Task

            # The demo agent hears of a new task as soon as it is committed, as a real agent polling
            # GET /api/v1/tasks?scope=open would a little later; the beat catches any it missed.
            post_save.connect(task_created_bid, sender=Task, dispatch_uid="demo.task_created_bid")
        if settings.DEMO_AGENT_ENABLED or settings.DEMO_INBOX_ENABLED:
            from celery.signals import beat_init, worker_ready

            from demo.signals import mark_ready

            # `make run` prints its banner once web, worker and beat are ready (scripts/run.sh).
            worker_ready.connect(mark_ready("worker"), weak=False)
            beat_init.connect(mark_ready("beat"), weak=False)
