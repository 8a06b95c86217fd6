from core.http.access import Access

ROUTES = {
    "POST /api/v1/auth/register": Access.PUBLIC,
    "POST /api/v1/auth/token": Access.PUBLIC,
    "POST /api/v1/auth/token/refresh": Access.PUBLIC,
    "GET /api/v1/auth/me": Access.USER,
    "PATCH /api/v1/auth/me": Access.USER,
    "DELETE /api/v1/auth/me": Access.USER,
    "POST /api/v1/auth/logout": Access.USER,
    "POST /api/v1/auth/password/change": Access.USER,
    "POST /api/v1/auth/password/reset": Access.PUBLIC,
    "POST /api/v1/auth/password/reset/confirm": Access.PUBLIC,
    "POST /api/v1/auth/email/verify": Access.USER,
    "POST /api/v1/auth/email/verify/resend": Access.USER,
    "GET /api/v1/auth/api-keys": Access.USER,
    "POST /api/v1/auth/api-keys": Access.USER,
    "DELETE /api/v1/auth/api-keys/{key_id}": Access.USER,
}
