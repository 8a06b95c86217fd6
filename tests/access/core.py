from core.http.access import Access

ROUTES = {
    "GET /health": Access.PUBLIC,
}
