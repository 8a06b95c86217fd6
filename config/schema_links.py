"""OpenAPI links: from the response that makes (or lists) something to the operations that take it.

A link says where a path parameter of the next call comes from: `bids_select` takes the `task_id` and the
`id` of the bid that `bids_create` answered. A client follows links instead of assembling URLs, and a
fuzzer's stateful phase follows them to reach real objects instead of guessing ids that do not exist
(docs/decisions.md#links).

The table is in `config`, beside `config/urls.py`, because it is wiring of the same kind: it names
operations of every app (a brand's competitors, a task's bids and delivery). The drf-spectacular
postprocessing hook `add_links` writes it into the document; tests/test_openapi_links.py checks that every
operation it names exists and that every expression points at a field the response has.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Links:
    """`source`'s `status` response gives `parameters` (target path parameter -> runtime expression) to each
    of `targets` (operationIds), and `body` (request body field -> runtime expression) when the target takes
    the object in its body rather than its path."""

    source: str
    status: str
    parameters: dict[str, str]
    targets: tuple[str, ...]
    description: str
    body: dict[str, str] | None = None


ID = "$response.body#/id"
FIRST_ITEM = "$response.body#/items/0/id"  # a list's newest row (the lists are newest first)

TASK = ("tasks_get", "tasks_cancel", "tasks_remix", "bids_list")
BID = ("bids_select", "bids_withdraw", "bids_artefacts", "bids_judge")
DELIVERY_ACTIONS = (
    "delivery_submit",
    "delivery_approve",
    "delivery_dispute",
    "delivery_request_revision",
    "delivery_retry",
)
AGENT = (
    "agents_get",
    "agents_update_endpoint",
    "agents_rotate_secret",
    "agents_benchmark",
    "agents_benchmarks_list",
    "agents_searches_list",
    "agents_searches_create",
)
BRAND = (
    "brands_get",
    "brands_update",
    "brands_delete",
    "brands_research_status",
    "competitors_list",
    "competitors_create",
    "publications_list",
    "publications_create",
    "tracked_groups_list",
    "tracked_groups_create",
    "artifacts_list",
)
COMPETITOR = ("competitors_update", "competitors_delete", "competitors_restore")
TRACKED_GROUP = ("tracked_groups_get", "tracked_groups_update", "tracked_groups_add_members")
PUBLICATION = ("publications_confirm", "publications_cancel")
BRAND_KIT = ("brand_kits_get", "brand_kits_update")
TEAM = ("teams_get", "teams_update", "teams_reactivate", "teams_unsubscribe")
SUBSCRIPTION = (
    "webhook_subscriptions_get",
    "webhook_subscriptions_delete",
    "webhook_subscriptions_deliveries",
    "webhook_subscriptions_rotate_secret",
)

LINKS: tuple[Links, ...] = (
    # The marketplace: task -> bid -> select -> (paid) delivery -> approve (docs/decisions.md#states).
    Links("tasks_create", "201", {"task_id": ID}, TASK, "The task just posted."),
    Links("tasks_remix", "201", {"task_id": ID}, TASK, "The task the remix posted."),
    # Agents bid on other posters' tasks: the open list is where an agent's owner finds them.
    Links("tasks_list", "200", {"task_id": FIRST_ITEM}, ("tasks_get", "bids_list", "bids_create"), "The newest task."),
    Links(
        "bids_create",
        "201",
        {"task_id": "$response.body#/task_id", "bid_id": ID},
        BID,
        "The bid just made.",
    ),
    # A poster's task is bid on by agents: the bids list is where the poster finds a bid to weigh and select
    # (withdrawing is the bidder's).
    Links(
        "bids_list",
        "200",
        {"task_id": "$request.path.task_id", "bid_id": FIRST_ITEM},
        ("bids_select", "bids_judge", "bids_artefacts"),
        "The newest bid on this task.",
    ),
    # The judge's score is what the poster weighs before selecting.
    Links(
        "bids_judge",
        "200",
        {"task_id": "$request.path.task_id", "bid_id": "$response.body#/bid_id"},
        ("bids_select",),
        "Select the bid judged.",
    ),
    # Once the selected bid's payment succeeds the task is `delivering` and has a delivery; the agent's owner
    # submits to it and the poster reviews it. Select, submit and dispute link nowhere: what follows them is
    # reached from the task and its delivery, and schemathesis starts scenarios at every POST that has an
    # outgoing link, with made-up path ids (all 404s).
    Links("tasks_get", "200", {"task_id": ID}, ("bids_list", "delivery_get"), "This task's bids, and its delivery."),
    Links("delivery_get", "200", {"task_id": "$response.body#/task_id"}, DELIVERY_ACTIONS, "This delivery."),
    Links("agents_register", "201", {"agent_id": ID}, AGENT, "The agent just registered."),
    Links(
        "agents_searches_create",
        "201",
        {"agent_id": "$response.body#/agent_id", "search_id": ID},
        ("agents_searches_get", "agents_searches_delete"),
        "The search just saved.",
    ),
    # Brands and what hangs off them.
    Links("brands_create", "201", {"brand_id": ID}, BRAND, "The brand just created."),
    Links("brands_create", "201", {}, ("brand_kits_create",), "A kit for the brand just created.", {"brand_id": ID}),
    Links(
        "competitors_create",
        "201",
        {"brand_id": "$response.body#/brand_id", "competitor_id": ID},
        COMPETITOR,
        "The competitor just added.",
    ),
    Links(
        "competitors_delete",
        "204",
        {"brand_id": "$request.path.brand_id", "competitor_id": "$request.path.competitor_id"},
        ("competitors_restore",),
        "Restore the competitor just removed.",
    ),
    Links(
        "tracked_groups_create",
        "201",
        {"brand_id": "$request.path.brand_id", "group_id": ID},
        TRACKED_GROUP,
        "The tracked group just created.",
    ),
    Links("publications_create", "201", {"publication_id": ID}, PUBLICATION, "The publication just prepared."),
    Links("brand_kits_create", "201", {"kit_id": ID}, BRAND_KIT, "The brand kit just created."),
    Links("teams_hire", "201", {"team_id": ID}, TEAM, "The team just hired."),
    Links(
        "webhook_subscriptions_create",
        "201",
        {"subscription_id": ID},
        SUBSCRIPTION,
        "The subscription just created.",
    ),
    Links("api_keys_create", "201", {"key_id": ID}, ("api_keys_revoke",), "The API key just created."),
    Links(
        "scraper_snapshots_trigger",
        "201",
        {"snapshot_id": "$response.body#/snapshot_id"},
        ("scraper_snapshot_progress",),
        "The snapshot just triggered.",
    ),
)


def _operations(result: dict) -> dict[str, dict]:
    return {
        operation["operationId"]: operation
        for path_item in result.get("paths", {}).values()
        for operation in path_item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def add_links(result, generator, request, public):
    """Write LINKS into the responses they start from (an unknown operation or status is an error: the
    table names the schema's operations, tests/test_openapi_links.py keeps it so)."""
    operations = _operations(result)
    for row in LINKS:
        source = operations[row.source]
        # A new response dict, so a response object drf-spectacular shares between operations keeps no link.
        response = {**source["responses"][row.status]}
        links = {**response.get("links", {})}
        for target in row.targets:
            if target not in operations:
                raise KeyError(f"config.schema_links: {row.source} links to {target}, which is no operation")
            link = {"operationId": target, "description": row.description}
            if row.parameters:
                link["parameters"] = dict(row.parameters)
            if row.body is not None:
                link["requestBody"] = dict(row.body)
            links[target] = link
        response["links"] = links
        source["responses"] = {**source["responses"], row.status: response}
    return result
