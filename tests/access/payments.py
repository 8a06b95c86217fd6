from core.http.access import Access

ROUTES = {
    "GET /api/v1/payouts": Access.USER,
    "GET /api/v1/payouts/account": Access.USER,
    "POST /api/v1/payouts/account": Access.USER,
    "GET /api/v1/payouts/balance": Access.USER,
    "GET /api/v1/payouts/earnings": Access.USER,
    "GET /api/v1/payouts/activity": Access.USER,
    "GET /api/v1/payouts/{payout_id}": Access.USER,
}
