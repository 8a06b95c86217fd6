"""The project's URLconf plus one view that accepts API keys, for testing the auth machinery
before (and independently of) the domain endpoints that accept keys."""

from django.urls import path
from rest_framework.response import Response

from config.urls import urlpatterns as project_urlpatterns
from core.api.views import ApiView
from core.http.access import Access


class KeyProbeView(ApiView):
    access = Access.USER_OR_KEY

    def get(self, request):
        return Response({"user": str(request.user.id), "via": type(request.auth).__name__})


PROBE = "/api/v1/tasks/_probe"
urlpatterns = [path(PROBE.lstrip("/"), KeyProbeView.as_view()), *project_urlpatterns]
