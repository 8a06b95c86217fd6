from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from core.access import Access
from core.api.serializers import HealthSerializer
from core.api.views import ApiView
from core.health import run_checks


class HealthView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="health",
        summary="Service health",
        description="Checks the database, the cache and the Celery broker. Not rate limited.",
        tags=["ops"],
        responses={200: HealthSerializer, 503: OpenApiResponse(HealthSerializer, description="A check failed.")},
    )
    def get(self, request):
        checks = run_checks()
        healthy = all(result == "ok" for result in checks.values())
        return Response({"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503)
