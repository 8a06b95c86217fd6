from django.apps import AppConfig


class DemoSeedConfig(AppConfig):
    """The demo data set, `manage.py seed_demo` (docs/operations.md#its-secrets-and-the-demo): installed in
    every profile, production's included (`make bench` seeds its production-shaped server with it), so it
    has no models. It works through every domain app's services, so it lives apart from all of them rather
    than in `core` (see docs/architecture.md#apps). The local profile's demo agent and webhook inbox are
    another app, `demo`, which config/settings/local.py alone installs."""

    name = "demo_seed"
    verbose_name = "Demo data set"
