"""Every production route, plus the benchmark's bare routes (never mounted in config/urls.py)."""

from django.urls import path

from bench.views import BareTaskListView, HelloView
from config.urls import handler404, handler500  # noqa: F401
from config.urls import urlpatterns as production_urlpatterns

urlpatterns = [
    path("bench/bare/hello", HelloView.as_view()),
    path("bench/bare/tasks", BareTaskListView.as_view()),
    *production_urlpatterns,
]
