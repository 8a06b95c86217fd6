from core.http.access import Access

ROUTES = {
    "POST /api/v1/assistant/messages": Access.USER,
    "GET /api/v1/assistant/conversations": Access.USER,
    "DELETE /api/v1/assistant/me": Access.USER,
    "GET /api/v1/allmodelchat/models": Access.USER,
    "GET /api/v1/allmodelchat/credits": Access.USER,
    "POST /api/v1/allmodelchat/credits/top-up": Access.USER,
    "GET /api/v1/allmodelchat/credits/transactions": Access.USER,
    "POST /api/v1/allmodelchat/generate/image": Access.USER,
    "POST /api/v1/brief/generate": Access.PUBLIC,
    "GET /api/v1/brief/suggestions": Access.PUBLIC,
    "POST /api/v1/signature/tagline": Access.PUBLIC,
    "POST /api/v1/signature/scrape-website": Access.PUBLIC,
}
