from core.access import Access

ROUTES = {
    "GET /health": Access.PUBLIC,
}
