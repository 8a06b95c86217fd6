from core.access import Access

ROUTES = {
    "POST /api/v1/auth/register": Access.PUBLIC,
    "POST /api/v1/auth/token": Access.PUBLIC,
    "POST /api/v1/auth/token/refresh": Access.PUBLIC,
    "GET /api/v1/auth/api-keys": Access.USER,
    "POST /api/v1/auth/api-keys": Access.USER,
    "DELETE /api/v1/auth/api-keys/{key_id}": Access.USER,
}
