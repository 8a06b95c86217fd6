"""The list filters answer bad input in the project's 422 shape (docs/decisions.md#list-filters).

Pins the exact bodies, taken from the query serializers the FilterSets replaced, so moving query parsing
to django-filter changes nothing a client sees: types, messages, ctx, input (the last of repeated values)
and the order of the errors."""

from __future__ import annotations

import pytest

from tests.webhooks_app.factories import WebhookSubscriptionFactory

BRAND = "/api/v1/brands/00000000-0000-0000-0000-000000000007"
SNAPSHOTS = "/api/v1/admin/scrapers/scraperprovider/snapshots"
UUID_PREFIX = "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found"
TASK_STATUSES = ("open", "awaiting_payment", "delivering", "in_review", "completed", "disputed", "cancelled")


def one_of(options) -> str:
    quoted = [f"'{option}'" for option in options]
    return ", ".join(quoted[:-1]) + f" or {quoted[-1]}"


def literal(name: str, value: str, options) -> dict:
    expected = one_of(options)
    return {
        "type": "literal_error",
        "loc": ["query", name],
        "msg": f"Input should be {expected}",
        "input": value,
        "ctx": {"expected": expected},
    }


def bad_uuid(name: str, value: str, error: str) -> dict:
    return {
        "type": "uuid_parsing",
        "loc": ["query", name],
        "msg": f"Input should be a valid UUID, {error}",
        "input": value,
        "ctx": {"error": error},
    }


def bound(kind: str, name: str, value: str, limit: int) -> dict:
    words = {"ge": "greater than or equal to", "le": "less than or equal to"}[kind]
    return {
        "type": {"ge": "greater_than_equal", "le": "less_than_equal"}[kind],
        "loc": ["query", name],
        "msg": f"Input should be {words} {limit}",
        "input": value,
        "ctx": {kind: limit},
    }


def not_an_int(name: str, value: str) -> dict:
    return {
        "type": "int_parsing",
        "loc": ["query", name],
        "msg": "Input should be a valid integer, unable to parse string as an integer",
        "input": value,
    }


SCOPES = ("mine", "open")
CASES = [
    (
        "alice_api",
        "/api/v1/brand-kits",
        "brand_id=%2000000000-0000-0000-0000-000000000001",
        [bad_uuid("brand_id", " 00000000-0000-0000-0000-000000000001", f"{UUID_PREFIX} ` ` at 1")],
    ),
    ("alice_api", "/api/v1/tasks", "scope=every&scope=", None),
    ("alice_api", f"{BRAND}/competitors", "removed=off", None),
    ("alice_api", f"{BRAND}/competitors", "removed=1", None),
    ("alice_api", "/api/v1/tasks", "scope=all", [literal("scope", "all", SCOPES)]),
    (
        "alice_api",
        "/api/v1/tasks",
        "status=nope&limit=0",
        [bound("ge", "limit", "0", 1), literal("status", "nope", TASK_STATUSES)],
    ),
    ("alice_api", "/api/v1/tasks", "scope=open&scope=every", [literal("scope", "every", SCOPES)]),
    ("alice_api", "/api/v1/tasks", "scope=every&scope=open", None),
    ("alice_api", "/api/v1/tasks", "scope=&status=", None),
    (
        "alice_api",
        "/api/v1/tasks",
        "offset=-1&scope=x&status=y&limit=abc",
        [
            not_an_int("limit", "abc"),
            bound("ge", "offset", "-1", 0),
            literal("scope", "x", SCOPES),
            literal("status", "y", TASK_STATUSES),
        ],
    ),
    (
        "alice_api",
        f"{BRAND}/publications",
        "status=gone&platform=myspace&action=x&creative_id=zz&limit=201",
        [
            literal(
                "status",
                "gone",
                ("preflight", "queued", "processing", "succeeded", "failed", "needs_attention", "cancelled"),
            ),
            literal("platform", "myspace", ("facebook", "instagram", "linkedin")),
            literal("action", "x", ("social_publish", "meta_creative_save")),
            bad_uuid("creative_id", "zz", f"{UUID_PREFIX} `z` at 1"),
            bound("le", "limit", "201", 200),
        ],
    ),
    (
        "alice_api",
        f"{BRAND}/publications",
        "creative_id=1234",
        [bad_uuid("creative_id", "1234", "invalid length: expected length 32 for simple format, found 4")],
    ),
    (
        "alice_api",
        f"{BRAND}/competitors",
        "removed=maybe",
        [
            {
                "type": "bool_parsing",
                "loc": ["query", "removed"],
                "msg": "Input should be a valid boolean, unable to interpret input",
                "input": "maybe",
            }
        ],
    ),
    (
        "alice_api",
        f"{BRAND}/brand-intelligence/artifacts",
        "module=tv&offset=x",
        [
            not_an_int("offset", "x"),
            literal(
                "module",
                "tv",
                ("competitors", "brand_classification", "paid_media", "organic_social", "seo", "website"),
            ),
        ],
    ),
    (
        "alice_api",
        "/api/v1/brand-kits",
        "brand_id=not-a-uuid",
        [bad_uuid("brand_id", "not-a-uuid", f"{UUID_PREFIX} `n` at 1")],
    ),
    (
        "alice_api",
        "/api/v1/teams",
        "status=asleep&limit=101",
        [
            literal("status", "asleep", ("onboarding", "active", "paused", "cancelling", "cancelled", "past_due")),
            bound("le", "limit", "101", 100),
        ],
    ),
    (
        "staff_api",
        SNAPSHOTS,
        "status=starting&provider=nobody",
        [
            literal("status", "starting", ("running", "ready", "failed")),
            literal("provider", "nobody", ("local", "brightdata")),
        ],
    ),
]


@pytest.mark.parametrize(("client", "path", "query", "detail"), CASES)
def test_bad_filters_are_422_in_the_project_shape(request, client, path, query, detail):
    response = request.getfixturevalue(client).get(f"{path}?{query}")

    if detail is None:  # a valid query: the brand path may not exist, the filters passed
        assert response.status_code in (200, 404)
    else:
        assert response.status_code == 422
        assert response.json() == {"detail": detail}


def test_bad_delivery_filters(alice_api, alice):
    subscription = WebhookSubscriptionFactory(owner=alice)

    response = alice_api.get(f"/api/v1/webhooks/subscriptions/{subscription.id}/deliveries?status=lost&limit=x")

    assert response.status_code == 422
    assert response.json() == {
        "detail": [not_an_int("limit", "x"), literal("status", "lost", ("pending", "sending", "succeeded", "failed"))]
    }
