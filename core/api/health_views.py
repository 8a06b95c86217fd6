from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api.serializers import HealthSerializer
from core.api.views import ApiView
from core.http.access import Access
from core.ops.health import CHECKS, draining, readiness


class HealthQuery(serializers.Serializer):
    probe = serializers.ChoiceField(
        choices=["ready", "live"],
        default="ready",
        help_text="`ready` (default): may this node get traffic (its checks pass and it is not shutting down). "
        "`live`: does the process answer at all (no checks; 200 while it drains).",
    )


class HealthView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="health",
        summary="Service health",
        description="Readiness (default): checks the database, the cache and the Celery broker, and answers 503 "
        "while the node drains before a shutdown. `?probe=live` is liveness: 200 whenever the process answers. "
        "Not rate limited; each server process runs the checks at most once a second (by default) and answers "
        "its last result in between.",
        tags=["ops"],
        parameters=[HealthQuery],
        responses={
            200: HealthSerializer,
            503: OpenApiResponse(HealthSerializer, description="A check failed, or the node is draining."),
        },
    )
    def get(self, request):
        probe = self.query(HealthQuery)["probe"]
        if probe == "live":
            return Response({"status": "ok", "checks": dict.fromkeys(CHECKS, "skipped")})
        if draining():
            return Response({"status": "error", "checks": dict.fromkeys(CHECKS, "error: draining")}, status=503)
        checks = readiness()  # remembered for HEALTH_CHECK_INTERVAL_SECONDS: a flood of probes is not one of checks
        healthy = all(result == "ok" for result in checks.values())
        return Response({"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503)
