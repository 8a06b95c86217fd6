from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from brands.api.serializers.connections import (
    ConnectAuthorizeInput,
    ConnectAuthorizeSerializer,
    ConnectedAccountSerializer,
    OAuthCallbackQuery,
    OAuthCallbackSerializer,
    OAuthConsentQuery,
)
from brands.selectors.brands import brand_of
from brands.selectors.connections import connections_of
from brands.services import connections as services
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent

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


class BrandConnectionAuthorizeView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="connections_authorize",
        summary="Start connecting a social account (OAuth)",
        description="Answers the platform's consent URL and the `state` it will send back to the callback "
        "(signed, bound to you, the brand and the platform, single-use, valid 10 minutes). Send the owner's browser "
        "to `authorization_url`; the platform then redirects it to `GET /api/v1/connected-accounts/oauth/callback`. "
        "With the local stand-in (the default) the URL is this server's consent endpoint, which sends the browser "
        "straight back: `simulated` says so (docs/decisions.md#connecting-accounts-oauth).",
        tags=TAGS,
        request=ConnectAuthorizeInput,
        responses={200: ConnectAuthorizeSerializer},
    )
    @idempotent
    def post(self, request, brand_id):
        data = self.body(ConnectAuthorizeInput)
        answer = services.oauth_authorize(
            owner=request.user,
            brand_id=brand_id,
            platform=data["platform"],
            redirect_uri=request.build_absolute_uri(reverse("connected-accounts-oauth-callback")),
            consent_url=request.build_absolute_uri(reverse("connected-accounts-oauth-local-consent")),
        )
        return Response(ConnectAuthorizeSerializer(answer).data)


class OAuthCallbackView(ApiView):
    access = Access.PUBLIC  # the platform redirects a browser here: the state names the user

    @extend_schema(
        operation_id="connections_oauth_callback",
        summary="The platforms' OAuth redirect: finish connecting",
        description="Checks the state (signature, age, used once), exchanges the code at the platform, and stores "
        "each account the consent gave to the state's brand, with its tokens encrypted (never shown). Answers JSON. "
        "A bad, expired or used state, a refused consent or a code the platform refuses is a 400 and changes "
        "nothing.",
        tags=TAGS,
        parameters=[OAuthCallbackQuery],
        responses={
            200: OAuthCallbackSerializer,
            400: error_response(
                "`oauth_state_invalid`, `oauth_state_expired`, `oauth_state_used`, `oauth_denied`, "
                "`oauth_code_refused`, `oauth_refused` or `oauth_no_accounts`."
            ),
        },
    )
    def get(self, request):
        params = self.query(OAuthCallbackQuery)
        accounts = services.oauth_callback(
            code=params.get("code", ""), state=params["state"], error=params.get("error", "")
        )
        data = {
            "brand_id": accounts[0].brand_id,
            "connected_accounts": accounts,
            "simulated": all(a.simulated for a in accounts),
        }
        return Response(OAuthCallbackSerializer(data).data)


class OAuthLocalConsentView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="connections_oauth_local_consent",
        summary="The local OAuth stand-in's consent (simulated)",
        description="Only with SOCIAL_OAUTH_PROVIDER=local (else 404): consents at once and redirects (302) to the "
        "callback with a simulated code and the state, as a platform's consent page would.",
        tags=TAGS,
        parameters=[OAuthConsentQuery],
        responses={
            (302, "text/plain"): OpenApiResponse(description="To the callback, `?code=...&state=...`."),
            400: error_response("`oauth_state_invalid` or `oauth_state_expired`."),
        },
    )
    def get(self, request):
        params = self.query(OAuthConsentQuery)
        location = services.oauth_local_consent(state=params["state"])
        return Response(status=status.HTTP_302_FOUND, headers={"Location": location})
