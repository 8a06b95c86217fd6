"""A URLconf with one idempotent view that fails on its first call, to see that a 5xx releases the key."""

from django.urls import path
from rest_framework.response import Response

from config.urls import urlpatterns as project_urlpatterns
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent


class FlakyView(ApiView):
    access = Access.USER
    calls = 0

    @idempotent
    def post(self, request):
        FlakyView.calls += 1
        if FlakyView.calls == 1:
            raise RuntimeError("the first call fails")
        return Response({"call": FlakyView.calls}, status=201)


urlpatterns = [path("api/v1/flaky", FlakyView.as_view()), *project_urlpatterns]
