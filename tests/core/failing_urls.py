"""A URLconf with one view that fails, to see what a bug looks like from outside."""

from django.urls import path

from config.urls import urlpatterns as project_urlpatterns
from core.api.views import ApiView
from core.http.access import Access


class ExplodingView(ApiView):
    access = Access.PUBLIC

    def get(self, request):
        raise RuntimeError("secret internals")


urlpatterns = [path("api/v1/explode", ExplodingView.as_view()), *project_urlpatterns]
