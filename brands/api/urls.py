"""Routes of brands, brand kits, competitors, research, brand intelligence, publications and the ad simulator."""

from django.urls import path

from brands.api import ads_views, brand_views, competitor_views, intelligence_views, publication_views

BRAND = "brands/<uid:brand_id>"
GROUPS = f"{BRAND}/brand-intelligence/tracked-groups"

urlpatterns = [
    path("ads/simulate", ads_views.AdSimulateView.as_view(), name="ads-simulate"),
    path("brands", brand_views.BrandListView.as_view(), name="brands"),
    path(BRAND, brand_views.BrandDetailView.as_view(), name="brand-detail"),
    path(f"{BRAND}/research-status", brand_views.ResearchStatusView.as_view(), name="brand-research-status"),
    path("brand-kits", brand_views.BrandKitListView.as_view(), name="brand-kits"),
    path("brand-kits/<uid:kit_id>", brand_views.BrandKitDetailView.as_view(), name="brand-kit-detail"),
    path(
        "brand-kits/<uid:kit_id>/link-team/<uid:team_id>",
        brand_views.BrandKitLinkTeamView.as_view(),
        name="brand-kit-link-team",
    ),
    path(f"{BRAND}/competitors", competitor_views.CompetitorListView.as_view(), name="competitors"),
    path(
        f"{BRAND}/competitors/<uid:competitor_id>",
        competitor_views.CompetitorDetailView.as_view(),
        name="competitor-detail",
    ),
    path(
        f"{BRAND}/competitors/<uid:competitor_id>/restore",
        competitor_views.CompetitorRestoreView.as_view(),
        name="competitor-restore",
    ),
    path(GROUPS, intelligence_views.TrackedGroupListView.as_view(), name="tracked-groups"),
    path(f"{GROUPS}/<uid:group_id>", intelligence_views.TrackedGroupDetailView.as_view(), name="tracked-group"),
    path(
        f"{GROUPS}/<uid:group_id>/members",
        intelligence_views.TrackedGroupMembersView.as_view(),
        name="tracked-group-members",
    ),
    path(f"{BRAND}/brand-intelligence/artifacts", intelligence_views.ArtifactListView.as_view(), name="artifacts"),
    path(
        f"{BRAND}/brand-intelligence/artifacts/<uid:artifact_id>",
        intelligence_views.ArtifactDetailView.as_view(),
        name="artifact-detail",
    ),
    path(f"{BRAND}/publications", publication_views.BrandPublicationListView.as_view(), name="brand-publications"),
    path(
        "publications/<uid:publication_id>/confirm",
        publication_views.PublicationConfirmView.as_view(),
        name="publication-confirm",
    ),
    path(
        "publications/<uid:publication_id>/cancel",
        publication_views.PublicationCancelView.as_view(),
        name="publication-cancel",
    ),
]
