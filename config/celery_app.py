"""The Celery application. Configuration lives in Django settings under the CELERY_ namespace."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("brandmarket")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
