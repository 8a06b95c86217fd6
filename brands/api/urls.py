"""Routes of brands, brand kits, competitors, research, brand intelligence, publications and the ad simulator."""

from django.urls import path

from brands.api.views import ads, brands, competitors, connections, intelligence, publications

BRAND = "brands/<uid:brand_id>"
GROUPS = f"{BRAND}/brand-intelligence/tracked-groups"

urlpatterns = [
    path("ads/simulate", ads.AdSimulateView.as_view(), name="ads-simulate"),
    path("brands", brands.BrandListView.as_view(), name="brands"),
    path(BRAND, brands.BrandDetailView.as_view(), name="brand-detail"),
    path(f"{BRAND}/research-status", brands.ResearchStatusView.as_view(), name="brand-research-status"),
    path(f"{BRAND}/research/<str:module>/run", brands.ResearchRunView.as_view(), name="brand-research-run"),
    path("brand-kits", brands.BrandKitListView.as_view(), name="brand-kits"),
    path("brand-kits/<uid:kit_id>", brands.BrandKitDetailView.as_view(), name="brand-kit-detail"),
    path(
        "brand-kits/<uid:kit_id>/link-team/<uid:team_id>",
        brands.BrandKitLinkTeamView.as_view(),
        name="brand-kit-link-team",
    ),
    path(f"{BRAND}/competitors", competitors.CompetitorListView.as_view(), name="competitors"),
    path(
        f"{BRAND}/competitors/<uid:competitor_id>",
        competitors.CompetitorDetailView.as_view(),
        name="competitor-detail",
    ),
    path(
        f"{BRAND}/competitors/<uid:competitor_id>/restore",
        competitors.CompetitorRestoreView.as_view(),
        name="competitor-restore",
    ),
    path(GROUPS, intelligence.TrackedGroupListView.as_view(), name="tracked-groups"),
    path(f"{GROUPS}/<uid:group_id>", intelligence.TrackedGroupDetailView.as_view(), name="tracked-group"),
    path(
        f"{GROUPS}/<uid:group_id>/members",
        intelligence.TrackedGroupMembersView.as_view(),
        name="tracked-group-members",
    ),
    path(f"{BRAND}/brand-intelligence/artifacts", intelligence.ArtifactListView.as_view(), name="artifacts"),
    path(
        f"{BRAND}/brand-intelligence/artifacts/<uid:artifact_id>",
        intelligence.ArtifactDetailView.as_view(),
        name="artifact-detail",
    ),
    path(f"{BRAND}/connections", connections.BrandConnectionListView.as_view(), name="brand-connections"),
    path(
        f"{BRAND}/connections/<uid:connection_id>",
        connections.BrandConnectionDetailView.as_view(),
        name="brand-connection-detail",
    ),
    path(
        f"{BRAND}/connected-accounts/authorize",
        connections.BrandConnectionAuthorizeView.as_view(),
        name="brand-connected-accounts-authorize",
    ),
    path(
        "connected-accounts/oauth/callback",
        connections.OAuthCallbackView.as_view(),
        name="connected-accounts-oauth-callback",
    ),
    path(
        "connected-accounts/oauth/local-consent",
        connections.OAuthLocalConsentView.as_view(),
        name="connected-accounts-oauth-local-consent",
    ),
    path(f"{BRAND}/publications", publications.BrandPublicationListView.as_view(), name="brand-publications"),
    path(
        "publications/<uid:publication_id>/confirm",
        publications.PublicationConfirmView.as_view(),
        name="publication-confirm",
    ),
    path(
        "publications/<uid:publication_id>/approve",
        publications.PublicationApproveView.as_view(),
        name="publication-approve",
    ),
    path(
        "publications/<uid:publication_id>/cancel",
        publications.PublicationCancelView.as_view(),
        name="publication-cancel",
    ),
]
