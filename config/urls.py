"""Routes. Every API route lives under /api/v1 and is declared in its app's `api/urls.py`."""

from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve as serve_file
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView

from accounts.admin_login import admin_login
from config.guide import api_root, guide_page, landing_page
from core.api.health_views import HealthView
from core.api.openapi_view import OpenApiView
from core.http.csp import page_policy
from core.http.views import api_not_found
from payments.views import checkout, payout_onboarding

# The marketplace first: Django tries the routes in order, and its open-task list is the hottest read
# (no two apps share a path, so the order decides nothing else).
api_v1 = [
    path("", include("tasks_market.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("brands.api.urls")),
    path("", include("teams.api.urls")),
    path("", include("assistant.api.urls")),
    path("", include("webhooks_app.api.urls")),
    path("", include("scrapers.api.urls")),
    path("", include("payments.api.urls")),
]

urlpatterns = [
    path("", page_policy("guide")(landing_page), name="landing"),
    path("api/v1/", api_root, name="api-root"),
    path("api/v1/", include(api_v1)),
    path("health", HealthView.as_view(), name="health"),
    path("openapi.json", OpenApiView.as_view(), name="schema"),
    path("docs", page_policy("swagger")(SpectacularSwaggerView.as_view(url_name="schema")), name="docs"),
    path("redoc", page_policy("redoc")(SpectacularRedocView.as_view(url_name="schema")), name="redoc"),
    # The project's own guide (docs/*.md) rendered beside Swagger UI and ReDoc.
    path("docs/guide", page_policy("guide")(guide_page), name="guide"),
    path("docs/guide/<slug:page>", page_policy("guide")(guide_page), name="guide-page"),
    # Before the admin's own routes: its login page counts attempts like the API's (accounts.throttle).
    path("admin/login/", admin_login, name="admin_login"),
    path("admin/", admin.site.urls),
    # The local payment provider's hosted checkout (public: the unguessable id is the capability).
    re_path(r"^checkout/(?P<session_id>[A-Za-z0-9_-]{16,64})$", page_policy("checkout")(checkout), name="checkout"),
    # The local payment provider's hosted payout onboarding (docs/payouts.md), like its checkout.
    re_path(
        r"^payouts/onboarding/(?P<link_id>[A-Za-z0-9_-]{16,64})$",
        page_policy("checkout")(payout_onboarding),
        name="payout-onboarding",
    ),
    # Generated media (e.g. images). In production the proxy or object storage serves MEDIA_URL.
    re_path(r"^media/(?P<path>.+)$", serve_file, {"document_root": settings.MEDIA_ROOT}),
    re_path(r"^api/", api_not_found),  # anything else under /api answers in JSON, never HTML
]
if apps.is_installed("demo") and (settings.DEMO_AGENT_ENABLED or settings.DEMO_INBOX_ENABLED):
    # The local profile's demo agent and webhook inbox (docs/guide.md#the-local-demo): only where its app is
    # installed (config/settings/local.py), since their views use its model.
    urlpatterns.append(path("", include("demo.urls")))

# Under /api/ each answers JSON in the error shape (core.http.views; see docs/decisions.md#errors).
handler400 = "core.http.views.handler400"
handler403 = "core.http.views.handler403"
handler404 = "core.http.views.handler404"
handler500 = "core.http.views.handler500"
