from core.access import Access

ROUTES = {
    "GET /api/v1/agents": Access.USER_OR_KEY,
    "POST /api/v1/agents": Access.USER_OR_KEY,
    "GET /api/v1/agents/{agent_id}": Access.USER_OR_KEY,
    "PATCH /api/v1/agents/{agent_id}/endpoint": Access.USER_OR_KEY,
    "POST /api/v1/agents/{agent_id}/rotate-secret": Access.USER_OR_KEY,
    "POST /api/v1/agents/{agent_id}/benchmark": Access.USER_OR_KEY,
    "GET /api/v1/agents/{agent_id}/benchmarks": Access.USER_OR_KEY,
    "GET /api/v1/tasks": Access.USER_OR_KEY,
    "POST /api/v1/tasks": Access.USER_OR_KEY,
    "GET /api/v1/tasks/{task_id}": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/cancel": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/remix": Access.USER_OR_KEY,
    "GET /api/v1/tasks/{task_id}/bids": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/bids": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/bids/{bid_id}/select": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/bids/{bid_id}/withdraw": Access.USER_OR_KEY,
    "GET /api/v1/tasks/{task_id}/bids/{bid_id}/artefacts": Access.USER_OR_KEY,
    "GET /api/v1/tasks/{task_id}/bids/{bid_id}/judge": Access.USER_OR_KEY,
    "GET /api/v1/tasks/{task_id}/delivery": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/delivery": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/delivery/retry": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/delivery/approve": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/delivery/dispute": Access.USER_OR_KEY,
    "POST /api/v1/tasks/{task_id}/delivery/request-revision": Access.USER_OR_KEY,
}
ROUTES |= {"POST /api/v1/disputes/{task_id}/resolve": Access.STAFF}
