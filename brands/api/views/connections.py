from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from brands.api.serializers.connections import ConnectedAccountSerializer
from brands.selectors.brands import brand_of
from brands.selectors.connections import connections_of
from brands.services import connections as services
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.views import ApiView
from core.http.access import Access

TAGS = ["connected accounts"]


class BrandConnectionListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="connections_list",
        summary="The brand's connected social accounts and their health",
        description="The platform accounts the brand publishes through, newest first, in the list envelope. "
        "`health` says whether the last call with the account's token worked; `token_expired` means the owner "
        "must connect the account again. Tokens are never shown.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(ConnectedAccountSerializer),
    )
    def get(self, request, brand_id):
        params = self.query(PageQuery)
        brand = brand_of(request.user, brand_id)
        rows, total, has_more, next_cursor = keyset_page(connections_of(brand), **params)
        return Response(render_page(ConnectedAccountSerializer, rows, total, has_more, next_cursor=next_cursor))


class BrandConnectionDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="connections_delete",
        summary="Disconnect a social account",
        description="Forgets the connection and its tokens at once. Publications already made stay as they are.",
        tags=TAGS,
        request=None,
        responses={204: None},
    )
    def delete(self, request, brand_id, connection_id):
        services.connection_delete(owner=request.user, brand_id=brand_id, connection_id=connection_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
