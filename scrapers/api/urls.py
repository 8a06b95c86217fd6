from django.urls import path

from scrapers.api import views

urlpatterns = [
    path(
        "admin/scrapers/scraperprovider/snapshots",
        views.SnapshotListView.as_view(),
        name="scraper-snapshots",
    ),
    path(
        "admin/scrapers/scraperprovider/snapshots/<str:snapshot_id>",
        views.SnapshotDetailView.as_view(),
        name="scraper-snapshot-detail",
    ),
]
