from core.http.access import Access

ROUTES = {
    "POST /api/v1/webhooks/payments": Access.PUBLIC,
    "GET /api/v1/webhooks/subscriptions": Access.USER_OR_KEY,
    "POST /api/v1/webhooks/subscriptions": Access.USER_OR_KEY,
    "GET /api/v1/webhooks/subscriptions/{subscription_id}": Access.USER_OR_KEY,
    "DELETE /api/v1/webhooks/subscriptions/{subscription_id}": Access.USER_OR_KEY,
    "POST /api/v1/webhooks/subscriptions/{subscription_id}/rotate-secret": Access.USER_OR_KEY,
    "GET /api/v1/webhooks/subscriptions/{subscription_id}/deliveries": Access.USER_OR_KEY,
}
