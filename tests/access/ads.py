from core.http.access import Access

ROUTES = {
    "POST /api/v1/ads/simulate": Access.USER_OR_KEY,
}
