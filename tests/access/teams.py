from core.http.access import Access

ROUTES = {
    "GET /api/v1/teams": Access.USER,
    "POST /api/v1/teams": Access.USER,
    "GET /api/v1/teams/{team_id}": Access.USER,
    "PATCH /api/v1/teams/{team_id}": Access.USER,
    "POST /api/v1/teams/{team_id}/unsubscribe": Access.USER,
    "POST /api/v1/teams/{team_id}/reactivate": Access.USER,
}
