from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo data set (`manage.py seed_demo`): it builds through every domain app's services, so it
    lives apart from all of them rather than in `core` (see docs/architecture.md#apps)."""

    name = "demo"
    verbose_name = "Demo data"
