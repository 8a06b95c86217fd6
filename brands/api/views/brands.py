from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from brands.api.serializers.brands import (
    BrandInput,
    BrandKitInput,
    BrandKitSerializer,
    BrandKitUpdateInput,
    BrandSerializer,
    LinkTeamSerializer,
    ResearchItemSerializer,
    ResearchStatusSerializer,
)
from brands.filters import BrandKitFilter
from brands.selectors.brands import brand_of, brands_of, kit_of, kits_of
from brands.selectors.research import research_status
from brands.services import brands as services
from brands.services.research import audit_rerun as research_rerun
from core.api.filters import filtered, parameters
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent

BRAND_TAGS = ["brands"]
KIT_TAGS = ["brand kits"]


class BrandListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brands_list",
        summary="List your brands",
        description="Your brands, newest first, in the list envelope (`items`, `total`, `has_more`).",
        tags=BRAND_TAGS,
        parameters=[PageQuery],
        responses=envelope(BrandSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(brands_of(request.user), **params)
        return Response(render_page(BrandSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="brands_create",
        summary="Create a brand",
        description=(
            "The domain is derived from `website_url` unless given. Research starts when a kit of the brand is linked "
            "to a team; follow it on `GET /api/v1/brands/{brand_id}/research-status`."
        ),
        tags=BRAND_TAGS,
        request=BrandInput,
        responses={201: BrandSerializer},
        examples=[
            OpenApiExample(
                "A brand and its website",
                request_only=True,
                value={
                    "name": "Acme Outdoor",
                    "website_url": "https://www.acme-outdoor.example",
                    "industry": "Outdoor equipment",
                    "country": "US",
                    "social_links": {"instagram": "https://instagram.com/acmeoutdoor"},
                },
            )
        ],
    )
    @idempotent
    def post(self, request):
        data = self.body(BrandInput)
        brand = services.brand_create(owner=request.user, data=data)
        return self.created(BrandSerializer(brand).data, "brand-detail", brand_id=brand.id)


class BrandDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brands_get",
        summary="A brand",
        description="One of your brands by id.",
        tags=BRAND_TAGS,
        responses=BrandSerializer,
    )
    def get(self, request, brand_id):
        return Response(BrandSerializer(brand_of(request.user, brand_id)).data)

    @extend_schema(
        operation_id="brands_update",
        summary="Change a brand",
        description="Changing website_url without domain re-derives domain from it.",
        tags=BRAND_TAGS,
        request=BrandInput,
        responses=BrandSerializer,
    )
    def patch(self, request, brand_id):
        changes = self.body(BrandInput, partial=True)
        brand = services.brand_update(owner=request.user, brand_id=brand_id, changes=changes)
        return Response(BrandSerializer(brand).data)

    @extend_schema(
        operation_id="brands_delete",
        summary="Delete a brand",
        description="Deletes its kits, competitors, tracked groups, artifacts and publications; linked teams "
        "forget the brand.",
        tags=BRAND_TAGS,
        responses={204: OpenApiResponse(description="Deleted.")},
    )
    def delete(self, request, brand_id):
        services.brand_delete(owner=request.user, brand_id=brand_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ResearchStatusView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brands_research_status",
        summary="The brand's background research status",
        description="Six items, always in this order: competitors, brand_classification, paid_media, "
        "organic_social, seo, website. Status: not_started → queued → running → completed | failed.",
        tags=BRAND_TAGS,
        responses=ResearchStatusSerializer,
    )
    def get(self, request, brand_id):
        brand = brand_of(request.user, brand_id)
        return Response(ResearchStatusSerializer(research_status(brand)).data)


class ResearchRunView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brands_research_run",
        summary="Run one of the brand's audits again",
        description="Queues the module's audit now and answers 202 with its research item (`queued`); the audit "
        "runs in the background as after a link (queued → running → completed | failed, with an artifact). The "
        "competitors audit runs a competitor discovery first. 409 `invalid_state` while the audit is already "
        "queued or running; 503 when the task queue did not take it (the item is as it was). An audit lost "
        "on the way (queue or worker) is queued again by a sweep a bounded "
        "number of times, then failed with the reason.",
        tags=BRAND_TAGS,
        request=None,
        responses={
            202: ResearchItemSerializer,
            404: error_response("No such brand, not yours, or no such module."),
            409: error_response("`invalid_state`: the audit is already queued or running."),
            503: error_response("`provider_unavailable`: the task queue did not take it; the item is as it was."),
        },
    )
    @idempotent
    def post(self, request, brand_id, module):
        item = research_rerun(owner=request.user, brand_id=brand_id, module=module)
        data = {
            "module": item.module,
            "status": item.status,
            "error_message": item.error_message or None,
            "updated_at": item.updated_at,
        }
        return Response(ResearchItemSerializer(data).data, status=202)


class BrandKitListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brand_kits_list",
        summary="List your brand kits",
        description="Newest first.",
        tags=KIT_TAGS,
        parameters=[parameters(BrandKitFilter), PageQuery],
        responses=envelope(BrandKitSerializer),
    )
    def get(self, request):
        params = self.query(BrandKitFilter, PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            filtered(BrandKitFilter, kits_of(request.user), params), limit=params["limit"], offset=params["offset"]
        )
        return Response(render_page(BrandKitSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="brand_kits_create",
        summary="Create a brand kit for one of your brands",
        description=(
            "A kit holds a brand's voice, tagline, colours, fonts, audiences, keywords and the competitors it names "
            "itself; `brand_id` names one of your brands."
        ),
        tags=KIT_TAGS,
        request=BrandKitInput,
        responses={201: BrandKitSerializer, 404: error_response("No such brand (brand_id), or not yours.")},
    )
    @idempotent
    def post(self, request):
        data = self.body(BrandKitInput)
        kit = services.brand_kit_create(owner=request.user, brand_id=data.pop("brand_id"), data=data)
        return self.created(BrandKitSerializer(kit).data, "brand-kit-detail", kit_id=kit.id)


class BrandKitDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brand_kits_get",
        summary="A brand kit",
        description="One of your brand kits by id.",
        tags=KIT_TAGS,
        responses=BrandKitSerializer,
    )
    def get(self, request, kit_id):
        return Response(BrandKitSerializer(kit_of(request.user, kit_id)).data)

    @extend_schema(
        operation_id="brand_kits_update",
        summary="Change a brand kit",
        description="Only the fields sent change (a partial update); the kit stays with its brand.",
        tags=KIT_TAGS,
        request=BrandKitUpdateInput,
        responses=BrandKitSerializer,
    )
    def patch(self, request, kit_id):
        changes = self.body(BrandKitUpdateInput, partial=True)
        kit = services.brand_kit_update(owner=request.user, kit_id=kit_id, changes=changes)
        return Response(BrandKitSerializer(kit).data)


class BrandKitLinkTeamView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="brand_kits_link_team",
        summary="Link a brand kit to one of your teams and start the brand audits",
        description="The team shows the kit's brand from now on (a team has one kit, a kit one team). After the "
        "link is committed, one audit per default module (brand_classification, competitors, and website when "
        "the brand has a website URL) plus each module named in the team's config.audits is started as a "
        "background task; each moves its research item queued → running → completed | failed and writes an "
        "artifact. An audit that cannot start is logged and skipped: this call still succeeds, and "
        "`audits_not_started` names it.",
        tags=KIT_TAGS,
        request=None,
        responses=LinkTeamSerializer,
    )
    @idempotent
    def post(self, request, kit_id, team_id):
        result = services.brand_kit_link_team(owner=request.user, kit_id=kit_id, team_id=team_id)
        return Response(
            LinkTeamSerializer(
                {
                    "kit_id": result.kit.id,
                    "team_id": result.team.id,
                    "brand_id": result.kit.brand_id,
                    "linked": True,
                    "audits": result.audits,
                    "audits_not_started": result.audits_not_started,
                }
            ).data
        )
