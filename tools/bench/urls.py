"""Every production route, plus the benchmark's bare routes (never mounted in config/urls.py)."""

from django.urls import path

from config.urls import handler404, handler500  # noqa: F401
from config.urls import urlpatterns as production_urlpatterns
from tools.bench.views import BareTaskListView, HelloView

urlpatterns = [
    path("bench/bare/hello", HelloView.as_view()),
    path("bench/bare/tasks", BareTaskListView.as_view()),
    *production_urlpatterns,
]
