from __future__ import annotations

import json
import re

from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from brands.api.serializers.competitors import (
    CompetitorInput,
    CompetitorSerializer,
    CompetitorUpdateInput,
)
from brands.filters import CompetitorFilter
from brands.selectors.brands import brand_of
from brands.selectors.competitors import competitor_roster_bytes
from brands.services import competitors as services
from core.api.filters import parameters
from core.api.schema import error_response
from core.api.views import ApiView, csv_export
from core.http.access import Access
from core.http.idempotency import idempotent

TAGS = ["competitors"]
_ACCEPTS_GZIP = re.compile(r"\bgzip\b")  # as django.middleware.gzip reads Accept-Encoding
NAME_ONLY = error_response("`name_only`: a brand_kit row cannot be changed here; edit the kit's competitor_names.")


class CompetitorListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="competitors_list",
        summary="The brand's competitors",
        description=(
            "Discovered rows (`seo_discovery`: the seed layer for the brand's domain read through the brand's "
            "copies, adopted discoveries and manual rows) merged with the names in the brand's kits "
            "(`brand_kit`, name only, stable ids). A kit name that duplicates a discovered row (or an earlier "
            "kit name) is dropped: names are normalised (case, accents, punctuation, legal suffixes such as "
            "inc/llc/ltd/gmbh/corp/co, a leading 'the', a trailing domain suffix) and compared with rapidfuzz "
            "token_sort_ratio >= 90; the discovered row wins. Order: starred first, then seo_discovery before "
            "brand_kit, then name. `?removed=true` lists only the removed seed rows. The merged roster (active "
            "or removed) is cached per brand and made stale by every committed write to the brand's "
            "competitors, overrides, kits or tracked groups, or to competitor seeds; it is sent gzip-encoded "
            "(Content-Encoding: gzip, Vary: Accept-Encoding) when the client accepts gzip and it is 1 KiB or "
            "more. With `Accept: text/csv`: the same roster as CSV."
        ),
        tags=TAGS,
        parameters=[parameters(CompetitorFilter)],
        responses=CompetitorSerializer(many=True),
    )
    @csv_export("competitors")
    def get(self, request, brand_id):
        params = self.query(CompetitorFilter)
        brand = brand_of(request.user, brand_id)
        if self.wants_csv(request):
            return Response(json.loads(competitor_roster_bytes(brand, removed=params["removed"])))
        # Ready bytes from the cache (brands.selectors.roster_cache), rendered by the selector on a miss:
        # thousands of rows would cost more through a serializer than everything else in the request.
        body = None
        if _ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            body = competitor_roster_bytes(brand, removed=params["removed"], gzip=True)
        if body is None:
            response = HttpResponse(competitor_roster_bytes(brand, removed=params["removed"]))
        else:
            response = HttpResponse(body)
            response["Content-Encoding"] = "gzip"
        response["Content-Type"] = "application/json"
        patch_vary_headers(response, ("Accept-Encoding",))
        return response

    def csv_table(self, data):
        return list(CompetitorSerializer().fields), list(data)

    @extend_schema(
        operation_id="competitors_create",
        summary="Add a competitor by hand",
        description="The row has `override.added` true and `analysis_data.added_manually` true.",
        tags=TAGS,
        request=CompetitorInput,
        responses={
            201: CompetitorSerializer,
            409: error_response("`duplicate_competitor`: the roster already has a competitor with this name."),
        },
    )
    @idempotent
    def post(self, request, brand_id):
        data = self.body(CompetitorInput)
        row = services.competitor_add(owner=request.user, brand_id=brand_id, data=data)
        return self.created(
            CompetitorSerializer(row).data, "competitor-detail", brand_id=brand_id, competitor_id=row["id"]
        )


class CompetitorDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="competitors_update",
        summary="Star or edit a competitor",
        description="On a seed row the change is recorded in the brand's copy (override.starred / "
        "override.edited_fields); a field set back to the seed's value is no longer an edit.",
        tags=TAGS,
        request=CompetitorUpdateInput,
        responses={200: CompetitorSerializer, 409: NAME_ONLY},
    )
    def patch(self, request, brand_id, competitor_id):
        changes = self.body(CompetitorUpdateInput, partial=True)
        row = services.competitor_update(
            owner=request.user, brand_id=brand_id, competitor_id=competitor_id, changes=changes
        )
        return Response(CompetitorSerializer(row).data)

    @extend_schema(
        operation_id="competitors_delete",
        summary="Remove a competitor",
        description="A seed row becomes removed (listed under ?removed=true, restorable); a manual row is deleted.",
        tags=TAGS,
        responses={204: OpenApiResponse(description="Removed."), 409: NAME_ONLY},
    )
    def delete(self, request, brand_id, competitor_id):
        services.competitor_remove(owner=request.user, brand_id=brand_id, competitor_id=competitor_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CompetitorRestoreView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="competitors_restore",
        summary="Restore a removed seed row",
        description="A removed seed row (one listed under `?removed=true`) comes back into the roster.",
        tags=TAGS,
        request=None,
        responses={
            200: CompetitorSerializer,
            409: error_response("`invalid_state`: the competitor is not removed; `name_only`: a brand_kit row."),
        },
    )
    @idempotent
    def post(self, request, brand_id, competitor_id):
        row = services.competitor_restore(owner=request.user, brand_id=brand_id, competitor_id=competitor_id)
        return Response(CompetitorSerializer(row).data)
