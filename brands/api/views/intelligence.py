from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from brands.api.serializers.intelligence import (
    ArtifactDetailSerializer,
    ArtifactSerializer,
    ModuleQuery,
    TrackedGroupCreateInput,
    TrackedGroupMembersInput,
    TrackedGroupSerializer,
    TrackedGroupUpdateInput,
)
from brands.filters import ArtifactFilter
from brands.selectors.brands import brand_of
from brands.selectors.intelligence import (
    artifact_of,
    artifacts_of,
    group_view,
    tracked_group_of,
    tracked_groups_of,
)
from brands.services import intelligence as services
from core.api.filters import filtered, parameters
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.validation import RequestValidationError
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent

TAGS = ["brand intelligence"]


def _group(brand, group_id, module=None) -> dict:
    return TrackedGroupSerializer(group_view(tracked_group_of(brand, group_id), module)).data


class TrackedGroupListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="tracked_groups_list",
        summary="The brand's tracked groups",
        description="Newest first; each with its shared membership.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(TrackedGroupSerializer),
    )
    def get(self, request, brand_id):
        params = self.query(PageQuery)
        brand = brand_of(request.user, brand_id)
        rows, total, has_more, next_cursor = keyset_page(tracked_groups_of(brand), **params)
        return Response(
            render_page(
                TrackedGroupSerializer, [group_view(g, None) for g in rows], total, has_more, next_cursor=next_cursor
            )
        )

    @extend_schema(
        operation_id="tracked_groups_create",
        summary="Create a tracked group",
        description="Members by id (`advertiser_ids`) and/or by domain (`advertisers`, found or created).",
        tags=TAGS,
        request=TrackedGroupCreateInput,
        responses={201: TrackedGroupSerializer},
    )
    @idempotent
    def post(self, request, brand_id):
        data = self.body(TrackedGroupCreateInput)
        group = services.tracked_group_create(
            owner=request.user,
            brand_id=brand_id,
            name=data["name"],
            shared_modules=data.get("shared_modules", []),
            advertiser_ids=data.get("advertiser_ids", []),
            advertisers=data.get("advertisers", []),
        )
        brand = brand_of(request.user, brand_id)
        return self.created(_group(brand, group.id), "tracked-group", brand_id=brand.id, group_id=group.id)


class TrackedGroupDetailView(ApiView):
    access = Access.USER

    def query_and_body(self, query_class, body_class) -> tuple[dict, dict]:
        """Both parsed, with the problems of both reported together."""
        results, errors = [], []
        for parse, serializer_class in ((self.query, query_class), (self.body, body_class)):
            try:
                results.append(parse(serializer_class))
            except RequestValidationError as exc:
                errors.extend(exc.errors)
        if errors:
            raise RequestValidationError(errors)
        return results[0], results[1]

    @extend_schema(
        operation_id="tracked_groups_get",
        summary="A tracked group, as a module sees it",
        description="With `module`: the module's forked membership if it has one, else the shared membership when "
        "the group extends to the module, else no members. Without: the shared membership.",
        tags=TAGS,
        parameters=[ModuleQuery],
        responses=TrackedGroupSerializer,
    )
    def get(self, request, brand_id, group_id):
        params = self.query(ModuleQuery)
        brand = brand_of(request.user, brand_id)
        return Response(_group(brand, group_id, params.get("module")))

    @extend_schema(
        operation_id="tracked_groups_update",
        summary="Rename a group and/or change the modules it extends to",
        description="Removing a module from shared_modules forks that module's membership: the members it has "
        "today stay visible under ?module=<it>, and members added to the group later do not reach it (`forked` "
        "true). Adding it back ends the fork. With `expected_updated_at` different from the group's "
        "updated_at, nothing changes and the answer is 409 stale_write. The answer shows the group as the "
        "`module` query's module sees it.",
        tags=TAGS,
        parameters=[ModuleQuery],
        request=TrackedGroupUpdateInput,
        responses={200: TrackedGroupSerializer, 409: error_response("`stale_write`: the group changed since.")},
    )
    def patch(self, request, brand_id, group_id):
        params, data = self.query_and_body(ModuleQuery, TrackedGroupUpdateInput)
        services.tracked_group_update(owner=request.user, brand_id=brand_id, group_id=group_id, **data)
        brand = brand_of(request.user, brand_id)
        return Response(_group(brand, group_id, params.get("module")))


class TrackedGroupMembersView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="tracked_groups_add_members",
        summary="Add advertisers to a group",
        description="By id (`advertiser_ids`) or by domain (`advertisers: [{name, domain}]`, found or created). "
        "They join the shared membership; forked modules do not see them.",
        tags=TAGS,
        request=TrackedGroupMembersInput,
        responses=TrackedGroupSerializer,
    )
    @idempotent
    def post(self, request, brand_id, group_id):
        data = self.body(TrackedGroupMembersInput)
        services.tracked_group_add_members(
            owner=request.user,
            brand_id=brand_id,
            group_id=group_id,
            advertiser_ids=data.get("advertiser_ids", []),
            advertisers=data.get("advertisers", []),
        )
        brand = brand_of(request.user, brand_id)
        return Response(_group(brand, group_id))


class ArtifactListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="artifacts_list",
        summary="The brand's intelligence history",
        description="Newest first. Each audit run writes one artifact (also when it failed).",
        tags=TAGS,
        parameters=[PageQuery, parameters(ArtifactFilter)],
        responses=envelope(ArtifactSerializer),
    )
    def get(self, request, brand_id):
        params = self.query(PageQuery, ArtifactFilter)
        brand = brand_of(request.user, brand_id)
        rows, total, has_more, next_cursor = keyset_page(
            filtered(ArtifactFilter, artifacts_of(brand), params), limit=params["limit"], offset=params["offset"]
        )
        return Response(render_page(ArtifactSerializer, rows, total, has_more, next_cursor=next_cursor))


class ArtifactDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="artifacts_get",
        summary="One artifact",
        description="A JSON object: id, brand_id, module, kind, title, summary, created_at and the free-form "
        "`data` the audit produced.",
        tags=TAGS,
        responses={200: OpenApiResponse(response=OpenApiTypes.OBJECT, description="The artifact.")},
    )
    def get(self, request, brand_id, artifact_id):
        brand = brand_of(request.user, brand_id)
        return Response(ArtifactDetailSerializer(artifact_of(brand, artifact_id)).data)
