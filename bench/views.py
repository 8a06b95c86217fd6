"""Views only the benchmark mounts (bench/urls.py): the floor, and a list without auth or rate limits."""

from __future__ import annotations

from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.http.access import Access
from tasks_market.api.views.tasks import TaskListView


class HelloView(APIView):
    """The floor: the cheapest DRF view there is, on the same server, settings and middleware."""

    authentication_classes = ()
    permission_classes = (AllowAny,)

    def get(self, request):
        return Response({"hello": "world"})


class BareTaskListView(TaskListView):
    """`GET /api/v1/tasks?scope=open` without authentication (and, by its path, without rate limiting).

    The same view code, selector, paging and serializer; `scope=open` does not depend on the caller.
    """

    access = Access.PUBLIC
