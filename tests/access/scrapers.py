from core.http.access import Access

ROUTES = {
    "GET /api/v1/admin/scrapers/scraperprovider/snapshots": Access.STAFF,
    "POST /api/v1/admin/scrapers/scraperprovider/snapshots": Access.STAFF,
    "GET /api/v1/admin/scrapers/scraperprovider/snapshots/{snapshot_id}": Access.STAFF,
}
