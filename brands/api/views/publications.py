from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from brands.api.serializers.publications import PublicationCreateInput, PublicationPageQuery, PublicationSerializer
from brands.filters import PublicationFilter
from brands.selectors.brands import brand_of
from brands.selectors.publications import publications_of
from brands.services import publications as services
from core.api.filters import filtered, parameters
from core.api.pagination import keyset_rows, next_page_link
from core.api.schema import error_response
from core.api.views import ApiView, csv_export
from core.http.access import Access
from core.http.idempotency import idempotent

TAGS = ["publications"]


class BrandPublicationListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="publications_list",
        summary="The brand's publications",
        description="Newest first, filtered by the query. A bare array (limit 1-200, default 50), paged by `offset` "
        'or by `cursor`: a page with more after it carries `Link: <URL>; rel="next"`, the same query with the '
        "next page's `cursor`; the last page has no `Link`. With `Accept: text/csv`: the same page as CSV.",
        tags=TAGS,
        parameters=[
            parameters(PublicationFilter),
            PublicationPageQuery,
            OpenApiParameter(
                "Link",
                str,
                OpenApiParameter.HEADER,
                response=[200],
                description='The next page, `<URL>; rel="next"`; absent on the last page.',
            ),
        ],
        responses=PublicationSerializer(many=True),
    )
    @csv_export("publications")
    def get(self, request, brand_id):
        params = self.query(PublicationFilter, PublicationPageQuery)
        brand = brand_of(request.user, brand_id)
        rows, next_cursor = keyset_rows(
            filtered(PublicationFilter, publications_of(brand), params),
            limit=params["limit"],
            offset=params["offset"],
            cursor=params.get("cursor"),
        )
        link = next_page_link(request, next_cursor)
        return Response(PublicationSerializer(rows, many=True).data, headers={"Link": link} if link else None)

    def csv_table(self, data):
        return list(PublicationSerializer().fields), list(data)

    @extend_schema(
        operation_id="publications_create",
        summary="Prepare a publication (preflight)",
        description="Creates a `preflight` publication for a creative: the exact payload to publish, its "
        "payload_hash, the platform rules' verdict as `warnings`, and `expires_at` (30 minutes by default). "
        "With `scheduled_at` it is published at that time once confirmed (queued, phase `scheduled`, until then). "
        "Nothing is published until it is confirmed.",
        tags=TAGS,
        request=PublicationCreateInput,
        responses={201: PublicationSerializer},
    )
    @idempotent
    def post(self, request, brand_id):
        data = self.body(PublicationCreateInput)
        publication = services.publication_create(owner=request.user, brand_id=brand_id, data=data)
        # A publication has no URL of its own: Location is the list that shows it (docs/decisions.md#creates).
        return self.created(PublicationSerializer(publication).data, "brand-publications", brand_id=brand_id)


class PublicationConfirmView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="publications_confirm",
        summary="Confirm a preflight: queue it for publishing",
        description="preflight → queued; the publisher then moves it to processing and to succeeded, failed or "
        "needs_attention. Each change emits a `publication.status_changed` webhook event. Confirmed, it waits "
        "24 hours for a worker from when it is due (`expires_at` moves there). A payload is published once: when "
        "the brand has already confirmed the same payload (same `payload_hash`: creative, variant, platform, "
        "destination and preview), the answer is that earlier publication and this preflight is left as it was.",
        tags=TAGS,
        request=None,
        responses={
            200: PublicationSerializer,
            409: error_response("`invalid_state`: not a preflight, or the preflight has expired."),
        },
    )
    @idempotent
    def post(self, request, publication_id):
        publication = services.publication_confirm(owner=request.user, publication_id=publication_id)
        return Response(PublicationSerializer(publication).data)


class PublicationCancelView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="publications_cancel",
        summary="Cancel a preflight or queued publication",
        description="The publication becomes `cancelled` and is never sent to the platform.",
        tags=TAGS,
        request=None,
        responses={
            200: PublicationSerializer,
            409: error_response("`invalid_state`: only preflight and queued publications can be cancelled."),
        },
    )
    @idempotent
    def post(self, request, publication_id):
        publication = services.publication_cancel(owner=request.user, publication_id=publication_id)
        return Response(PublicationSerializer(publication).data)


class PublicationApproveView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="publications_approve",
        summary="Approve a confirmed publication (supervised teams)",
        description="For a brand whose kit is linked to a team in `supervised` mode a confirmed publication waits, "
        "`queued` in phase `awaiting_approval` and without expiring, until the brand owner approves it here; it "
        "then goes to the publisher (or waits for its `scheduled_at`). Approving it again answers it as it is.",
        tags=TAGS,
        request=None,
        responses={
            200: PublicationSerializer,
            409: error_response("`invalid_state`: the publication is not waiting for approval."),
        },
    )
    @idempotent
    def post(self, request, publication_id):
        publication = services.publication_approve(owner=request.user, publication_id=publication_id)
        return Response(PublicationSerializer(publication).data)
