"""The project's routes plus the local demo's, whatever the test settings say (the demo's own
urls module builds its patterns from the settings once, at import)."""

from django.urls import path, re_path

from config.urls import urlpatterns as project_urlpatterns
from demo import views

urlpatterns = [
    path("demo/agent/tasks", views.agent_tasks),
    path("demo/inbox", views.inbox_page),
    re_path(r"^demo/inbox/(?P<token>[A-Za-z0-9_-]{1,64})$", views.inbox_endpoint),
    *project_urlpatterns,
]
