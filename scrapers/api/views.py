from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.filters import filtered, parameters
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView
from core.http.access import Access
from scrapers.api.serializers import (
    SnapshotCreateInput,
    SnapshotProgressSerializer,
    SnapshotSerializer,
)
from scrapers.filters import SnapshotFilter
from scrapers.providers import DatasetNotFound
from scrapers.selectors import snapshot_get, snapshot_list
from scrapers.services import snapshot_refresh, snapshot_trigger

TAGS = ["admin scrapers"]


class SnapshotListView(ApiView):
    access = Access.STAFF
    required_permission = {"GET": "scrapers.view_snapshot", "POST": "scrapers.add_snapshot"}

    @extend_schema(
        operation_id="scraper_snapshots_list",
        summary="List scraping snapshots (staff)",
        description="Newest first, as stored (the poller keeps running ones current). Needs the "
        "`scrapers.view_snapshot` permission.",
        tags=TAGS,
        parameters=[PageQuery, parameters(SnapshotFilter)],
        responses=envelope(SnapshotSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery, SnapshotFilter)
        rows, total, has_more, next_cursor = keyset_page(
            filtered(SnapshotFilter, snapshot_list(), params),
            limit=params["limit"],
            offset=params["offset"],
            cursor=params.get("cursor"),
        )
        return Response(render_page(SnapshotSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="scraper_snapshots_trigger",
        summary="Trigger a scraping snapshot at the configured provider (staff)",
        description="Starts a collection of `dataset_id` over the inputs and returns the snapshot, `running`. "
        "An unknown dataset is a 422 on `dataset_id`. Needs the `scrapers.add_snapshot` permission.",
        tags=TAGS,
        request=SnapshotCreateInput,
        responses={
            201: SnapshotSerializer,
            502: error_response("The scraping provider refused the collection."),
            503: error_response("The scraping provider is not configured or cannot be reached."),
        },
    )
    def post(self, request):
        data = self.body(SnapshotCreateInput)
        try:
            snapshot = snapshot_trigger(user=request.user, dataset_id=data["dataset_id"], inputs=data["inputs"])
        except DatasetNotFound as exc:
            raise RequestValidationError(
                [
                    error(
                        "value_error",
                        ["body", "dataset_id"],
                        f"Value error, {exc.message}",
                        data["dataset_id"],
                        {"error": exc.message},
                    )
                ]
            ) from exc
        return self.created(
            SnapshotSerializer(snapshot).data, "scraper-snapshot-detail", snapshot_id=snapshot.snapshot_id
        )


class SnapshotDetailView(ApiView):
    access = Access.STAFF
    required_permission = "scrapers.view_snapshot"

    @extend_schema(
        operation_id="scraper_snapshot_progress",
        summary="Live progress of a scraping snapshot (staff)",
        description="Asks the provider for a running snapshot's progress and stores it. When the provider "
        "cannot be asked, the stored state is returned with `live: false, stale: true`. A final snapshot "
        "(ready or failed) is answered from storage with `live: false, stale: false`. `error_message` says "
        "why a snapshot failed. Needs the `scrapers.view_snapshot` permission.",
        tags=TAGS,
        responses={200: SnapshotProgressSerializer},
    )
    def get(self, request, snapshot_id: str):
        return Response(
            SnapshotProgressSerializer(snapshot_refresh(snapshot=snapshot_get(snapshot_id=snapshot_id))).data
        )
