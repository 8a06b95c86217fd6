"""The local demo's routes (docs/guide.md#the-local-demo); config/urls.py includes them only where this app
is installed and DEMO_AGENT_ENABLED / DEMO_INBOX_ENABLED are on (the local profile)."""

from django.conf import settings
from django.urls import path, re_path

from core.http.csp import page_policy
from demo import views

urlpatterns = []
if settings.DEMO_AGENT_ENABLED:
    urlpatterns.append(path("demo/agent/tasks", views.agent_tasks, name="demo-agent"))
if settings.DEMO_INBOX_ENABLED:
    urlpatterns += [
        path("demo/inbox", page_policy("guide")(views.inbox_page), name="demo-inbox"),
        re_path(r"^demo/inbox/(?P<token>[A-Za-z0-9_-]{1,64})$", views.inbox_endpoint, name="demo-inbox-endpoint"),
    ]
