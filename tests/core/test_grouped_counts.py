"""Grouped kept counts (core.db.counters, `install_sql(key=...)`, `register_grouped`; docs/decisions.md#lists):
after every kind of write, each key's kept count equals a COUNT of its rows, and the reconciliation finds and
fixes a key that drifted. The families are the marketplace's (tasks_market.counters): a poster's tasks per
status (a row moves between keys when its status or its poster changes) and a task's bids; a user's agents and
API keys (accounts.counters); a seller's earnings and payouts (payments.counters); a subscription's deliveries
(webhooks_app.counters)."""

from __future__ import annotations

import importlib
import secrets
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from accounts.counters import USER_API_KEYS
from accounts.models import ApiKey
from core.db import counters
from core.models import Counter
from payments.counters import OWNER_EARNINGS, OWNER_PAYOUTS
from payments.models import Earning, EarningStatus, Payout, PayoutAccount
from tasks_market.counters import OWNER_AGENTS, POSTER_TASKS, TASK_BIDS, poster_tasks, task_bids
from tasks_market.models import Agent, Bid, Task, TaskStatus
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.counters import SUBSCRIPTION_DELIVERIES
from webhooks_app.models import WebhookDelivery, WebhookDeliveryStatus, WebhookEvent

pytestmark = pytest.mark.django_db

FAMILIES = {  # each family: its rows, and the fields of its key
    POSTER_TASKS: (Task.objects.all, ("poster_id", "status")),
    TASK_BIDS: (Bid.objects.all, ("task_id",)),
    OWNER_AGENTS: (Agent.objects.all, ("owner_id",)),
    USER_API_KEYS: (lambda: ApiKey.objects.filter(revoked_at__isnull=True), ("user_id",)),
    OWNER_EARNINGS: (Earning.objects.all, ("owner_id",)),
    OWNER_PAYOUTS: (Payout.objects.all, ("owner_id",)),
    SUBSCRIPTION_DELIVERIES: (WebhookDelivery.objects.all, ("subscription_id", "status")),
}


def _kept(family: str) -> dict[str, int]:
    """Every key of the family with a non-zero kept count (the triggers leave a key at zero)."""
    rows = (
        Counter.objects.filter(name__startswith=f"{family}.")
        .values("name")
        .annotate(n=Sum("value"))
        .values_list("name", "n")
    )
    return {name: n for name, n in rows if n}


def _counted(family: str) -> dict[str, int]:
    queryset, by = FAMILIES[family]
    rows = queryset().order_by().values(*by).annotate(n=Count("pk")).values_list(*by, "n")
    return {counters.key_name(family, *row[:-1]): row[-1] for row in rows}


def _assert_kept_is_counted() -> None:
    for family in FAMILIES:
        assert _kept(family) == _counted(family), family


def _insert(alice, bob, tasks):
    TaskFactory(poster=bob)
    BidFactory(task=tasks[0])


def _status_change(alice, bob, tasks):
    tasks[0].status = TaskStatus.CANCELLED
    tasks[0].save()


def _poster_change(alice, bob, tasks):  # the row leaves one poster's key for another's
    Task.objects.filter(pk=tasks[1].pk).update(poster=bob)


def _change_in_place(alice, bob, tasks):
    Task.objects.filter(poster=alice).update(title="renamed")


def _delete(alice, bob, tasks):
    tasks[0].delete()  # and its bids with it (a cascade)


def _bulk_update(alice, bob, tasks):  # one statement, rows of several keys moving to one
    Task.objects.all().update(status=TaskStatus.COMPLETED)


def _bulk_create(alice, bob, tasks):
    Task.objects.bulk_create(
        [
            Task(
                poster=poster,
                title=f"t{n}",
                description="d",
                budget_amount=5,
                budget_currency="usd",
                deadline=tasks[0].deadline,
                category="content",
                requirements=[],
                status=status,
            )
            for n, (poster, status) in enumerate(
                [(alice, TaskStatus.OPEN), (bob, TaskStatus.OPEN), (bob, TaskStatus.CANCELLED), (alice, "disputed")]
            )
        ]
    )
    Bid.objects.bulk_create([Bid(**_bid_row(tasks[1])), Bid(**_bid_row(tasks[2]))])


def _bid_row(task) -> dict:
    bid = Bid.objects.values().first()
    return {key: value for key, value in bid.items() if key not in ("id", "created_at", "updated_at")} | {
        "task_id": task.pk
    }


def _agents(alice, bob, tasks):  # created, given to another owner, deleted
    agents = [AgentFactory(owner=alice) for _ in range(3)]
    Agent.objects.filter(pk__in=[agents[0].pk, agents[1].pk]).update(owner=bob)
    agents[2].delete()


def api_key(user) -> ApiKey:
    return ApiKey.objects.create(user=user, name="k", prefix=secrets.token_hex(4), key_hash="0" * 64)


def _api_keys(alice, bob, tasks):  # created, revoked (out of the count), given to another user, deleted
    keys = [api_key(alice) for _ in range(4)]
    ApiKey.objects.filter(pk=keys[0].pk).update(revoked_at=tasks[0].created_at)
    ApiKey.objects.filter(pk=keys[1].pk).update(user=bob)
    keys[2].delete()
    ApiKey.objects.filter(pk=keys[0].pk).delete()  # a revoked key: no count moves


def earning(owner) -> Earning:
    return Earning.objects.create(
        owner=owner, source=f"task:{uuid.uuid4()}", payment_ref="pi_count", provider="local", currency="usd",
        gross=1, fee=0, amount=1, available_after=timezone.now(),
    )  # fmt: skip


def payout(owner) -> Payout:
    account, _ = PayoutAccount.objects.get_or_create(
        owner=owner, defaults={"provider": "local", "provider_account_id": f"acct_{uuid.uuid4().hex[:12]}"}
    )
    return Payout.objects.create(
        owner=owner, account=account, amount=1, currency="usd", idempotency_key=f"payout:{uuid.uuid4()}"
    )


def delivery(subscription) -> WebhookDelivery:
    event = WebhookEvent.objects.create(owner=subscription.owner, type="task.created", body="{}")
    return WebhookDelivery.objects.create(event=event, subscription=subscription, message_id=f"msg_{uuid.uuid4().hex}")


def refused_delete(queryset) -> None:
    """Money rows are never deleted (payments migration 0008): the database refuses, no count moves."""
    with pytest.raises((IntegrityError, DatabaseError)), transaction.atomic():
        queryset.delete()


def _money(alice, bob, tasks):  # created, status changed in place, given to another seller, a refused delete
    earnings = [earning(alice) for _ in range(3)]
    payouts = [payout(alice) for _ in range(2)]
    Earning.objects.filter(owner=alice).update(status=EarningStatus.AVAILABLE)
    Payout.objects.filter(pk=payouts[0].pk).update(status=Payout.Status.PAID)
    Earning.objects.filter(pk=earnings[0].pk).update(owner=bob)
    Payout.objects.filter(pk=payouts[1].pk).update(owner=bob)
    refused_delete(Earning.objects.filter(pk=earnings[1].pk))
    refused_delete(Payout.objects.filter(pk=payouts[0].pk))


def _deliveries(alice, bob, tasks):  # created, status changed, moved to another subscription, deleted, cascaded
    mine, other = WebhookSubscriptionFactory(owner=alice), WebhookSubscriptionFactory(owner=bob)
    deliveries = [delivery(mine) for _ in range(4)] + [delivery(other)]
    WebhookDelivery.objects.filter(subscription=mine).update(status=WebhookDeliveryStatus.SUCCEEDED)
    WebhookDelivery.objects.filter(pk=deliveries[0].pk).update(subscription=other)
    deliveries[1].delete()
    other.delete()  # its deliveries with it (a cascade)


def _rolled_back(alice, bob, tasks):
    with pytest.raises(RuntimeError), transaction.atomic():
        TaskFactory(poster=alice)
        Task.objects.filter(poster=alice).update(status=TaskStatus.CANCELLED)
        BidFactory(task=tasks[2])
        earning(alice)
        payout(alice)
        delivery(WebhookSubscriptionFactory(owner=alice))
        raise RuntimeError


def _bulk_sql(alice, bob, tasks):  # as the bench fills a poster: INSERT ... SELECT in one statement
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM tasks_market_task LIMIT 0")
        columns = [column.name for column in cursor.description]
        select = ", ".join("gen_random_uuid()" if c == "id" else f"t.{c}" for c in columns)
        cursor.execute(
            f"INSERT INTO tasks_market_task ({', '.join(columns)}) SELECT {select} "
            f"FROM generate_series(1, 50) g, (SELECT * FROM tasks_market_task WHERE poster_id = %s LIMIT 1) t",
            [alice.pk],
        )


WRITES = [
    _insert,
    _status_change,
    _poster_change,
    _change_in_place,
    _delete,
    _bulk_update,
    _bulk_create,
    _rolled_back,
    _bulk_sql,
    _agents,
    _api_keys,
    _money,
    _deliveries,
]


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__.strip("_") for write in WRITES])
def test_every_kind_of_write_keeps_each_key(alice, bob, write):
    tasks = [TaskFactory(poster=alice) for _ in range(3)]
    TaskFactory(poster=bob, status=TaskStatus.CANCELLED)
    BidFactory(task=tasks[0])
    BidFactory(task=tasks[0])
    api_key(alice)
    earning(alice)
    payout(alice)
    delivery(WebhookSubscriptionFactory(owner=alice))
    _assert_kept_is_counted()

    write(alice, bob, tasks)

    _assert_kept_is_counted()
    assert (
        counters.count_of(poster_tasks(alice.pk, TaskStatus.OPEN))
        == Task.objects.filter(poster=alice, status=TaskStatus.OPEN).count()
    )


def test_the_reconciliation_finds_and_fixes_drift_per_key_and_removes_keys_without_rows(alice, bob):
    task = TaskFactory(poster=alice)
    TaskFactory(poster=bob)
    Task.objects.filter(poster=bob).update(status=TaskStatus.CANCELLED)  # bob's open key is now at zero
    drifted = poster_tasks(alice.pk, TaskStatus.OPEN)
    Counter.objects.filter(name=drifted).update(value=0)
    # Kept 5 in a shard of its own: the triggers wrote the shard of this connection (its backend pid % SHARDS).
    taken = set(Counter.objects.filter(name=drifted).values_list("shard", flat=True))
    spare = next(shard for shard in range(counters.SHARDS) if shard not in taken)
    Counter.objects.create(name=drifted, shard=spare, value=5)
    gone = poster_tasks(bob.pk, TaskStatus.COMPLETED)  # no such row: a key to remove
    Counter.objects.create(name=gone, shard=3, value=2)
    missing = task_bids(task.pk)  # a bid the triggers did not see (bulk SQL with the triggers off, say)
    BidFactory(task=task)
    Counter.objects.filter(name=missing).delete()

    report = counters.counters_reconcile(fix=False)

    assert report[POSTER_TASKS]["drifted"] == {
        drifted: {"kept": 5, "actual": 1, "drift": -4},
        gone: {"kept": 2, "actual": 0, "drift": -2},
    }
    assert report[POSTER_TASKS]["drift"] == 6
    assert report[TASK_BIDS]["drifted"] == {missing: {"kept": 0, "actual": 1, "drift": 1}}
    with pytest.raises(CommandError):
        call_command("counters_reconcile", "--check", stdout=StringIO())

    out = StringIO()
    call_command("counters_reconcile", stdout=out)

    lines = out.getvalue().splitlines()
    assert f"{POSTER_TASKS}.*: 4 keys, kept 8, actual 2, 2 keys drifted by 6" in lines
    assert f"  {drifted}: kept 5, actual 1, drift -4" in lines
    assert not any(poster_tasks(bob.pk, TaskStatus.CANCELLED) in line for line in lines)  # not a line per key
    _assert_kept_is_counted()
    assert not Counter.objects.filter(name=gone).exists()
    assert not Counter.objects.filter(name=poster_tasks(bob.pk, TaskStatus.OPEN)).exists()  # zero: removed
    assert counters.count_of(drifted) == 1
    report = counters.counters_reconcile(fix=False)
    assert report[POSTER_TASKS]["drift"] == report[TASK_BIDS]["drift"] == 0


@pytest.mark.parametrize("family", [OWNER_EARNINGS, OWNER_PAYOUTS, SUBSCRIPTION_DELIVERIES])
def test_the_reconciliation_covers_the_sellers_and_the_subscriptions_counts(alice, bob, family):
    subscription = WebhookSubscriptionFactory(owner=alice)
    for _ in range(2):
        earning(alice)
        payout(alice)
        delivery(subscription)
    key = (
        counters.key_name(family, subscription.pk, WebhookDeliveryStatus.PENDING)
        if family == SUBSCRIPTION_DELIVERIES
        else counters.key_name(family, alice.pk)
    )
    gone = counters.key_name(family, bob.pk)  # no row of bob's (for deliveries, a key of 0005's shape): removed
    Counter.objects.filter(name=key).delete()  # kept 7, in one shard
    Counter.objects.create(name=key, shard=5, value=7)
    Counter.objects.create(name=gone, shard=1, value=3)

    report = counters.counters_reconcile(fix=False)

    assert report[family]["drifted"] == {
        key: {"kept": 7, "actual": 2, "drift": -5},
        gone: {"kept": 3, "actual": 0, "drift": -3},
    }
    counters.counters_reconcile()
    assert counters.count_of(key) == 2
    assert not Counter.objects.filter(name=gone).exists()
    _assert_kept_is_counted()
    assert counters.counters_reconcile(fix=False)[family]["drift"] == 0


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_the_migration_installs_what_install_sql_generates(vendor):
    """The frozen SQL of tasks_market's migration is `install_sql`'s for these two grouped counts."""
    migration = importlib.import_module("tasks_market.migrations.0014_poster_and_bid_counts")
    forward, backward = [], []
    for name, table, key in (
        (POSTER_TASKS, "tasks_market_task", ("poster_id", "status")),
        (TASK_BIDS, "tasks_market_bid", ("task_id",)),
    ):
        up, down = counters.install_sql(vendor, name=name, table=table, condition="true", key=key, versions=False)
        forward += [statement for statement in up if statement not in forward]
        backward = down + backward
    assert migration.FORWARD[vendor] == forward
    assert migration.BACKWARD[vendor] == backward
    agents = importlib.import_module("tasks_market.migrations.0015_agent_counts")
    up, down = counters.install_sql(
        vendor, name=OWNER_AGENTS, table="tasks_market_agent", condition="true", key=("owner_id",), versions=False
    )
    assert (agents.FORWARD[vendor], agents.BACKWARD[vendor]) == (up, down)
    keys = importlib.import_module("accounts.migrations.0008_api_key_counts")
    up, down = counters.install_sql(
        vendor,
        name=USER_API_KEYS,
        table="accounts_apikey",
        condition="{row}.revoked_at IS NULL",
        key=("user_id",),
        versions=False,
    )
    assert (keys.FORWARD[vendor], keys.BACKWARD[vendor]) == (up, down)
    for module, families in FROZEN:
        migration = importlib.import_module(module)
        forward, backward = [], []
        for part, name, table, key in families:
            up, down = counters.install_sql(vendor, name=name, table=table, condition="true", key=key, versions=False)
            if part:  # one of several families in the migration, also kept apart
                assert getattr(migration, part)[vendor] == (up, down), name
            forward += [statement for statement in up if statement not in forward]
            backward = down + backward
        assert (migration.FORWARD[vendor], migration.BACKWARD[vendor]) == (forward, backward), module


FROZEN = [  # (migration, its families: (its name for the family's SQL, family, table, key)), every row counted
    (
        "payments.migrations.0011_earning_payout_counts",
        [
            ("EARNINGS", OWNER_EARNINGS, "payments_earning", ("owner_id",)),
            ("PAYOUTS", OWNER_PAYOUTS, "payments_payout", ("owner_id",)),
        ],
    ),
    (
        "webhooks_app.migrations.0005_delivery_counts",
        [(None, SUBSCRIPTION_DELIVERIES, "webhooks_app_webhookdelivery", ("subscription_id",))],
    ),
]


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_the_deliveries_count_per_status_replaces_the_count_of_every_status(vendor):
    """webhooks_app 0006 forgets 0005's keys, then installs what `install_sql` generates per status; going
    back uninstalls that and installs 0005's count again (its SQL frozen in 0006 too)."""
    migration = importlib.import_module("webhooks_app.migrations.0006_delivery_counts_by_status")
    up, down = counters.install_sql(
        vendor,
        name=SUBSCRIPTION_DELIVERIES,
        table="webhooks_app_webhookdelivery",
        condition="true",
        key=("subscription_id", "status"),
        versions=False,
    )
    assert (migration.INSTALL[vendor], migration.UNINSTALL[vendor]) == (up, down)
    assert down[-1] == migration.FORGET_OLD_KEYS  # the family's every key
    every_status = importlib.import_module("webhooks_app.migrations.0005_delivery_counts")
    assert migration.EVERY_STATUS[vendor] == every_status.FORWARD[vendor]  # going back: 0005's, frozen again


def test_the_deliveries_migration_goes_back_and_forth_with_the_counts_true(alice):
    """0006 back to 0005 (one key per subscription) and forward again (one per status), on this database, with
    deliveries of two statuses in place: each time the kept keys are the rows' counts."""
    from django.db import connection

    subscription = WebhookSubscriptionFactory(owner=alice)
    deliveries = [delivery(subscription) for _ in range(3)]
    WebhookDelivery.objects.filter(pk=deliveries[0].pk).update(status=WebhookDeliveryStatus.SUCCEEDED)
    migration = importlib.import_module("webhooks_app.migrations.0006_delivery_counts_by_status")
    with connection.schema_editor() as editor:
        migration.backwards(None, editor)
    assert _kept(SUBSCRIPTION_DELIVERIES) == {counters.key_name(SUBSCRIPTION_DELIVERIES, subscription.pk): 3}
    delivery(subscription)  # counted by 0005's triggers
    assert _kept(SUBSCRIPTION_DELIVERIES) == {counters.key_name(SUBSCRIPTION_DELIVERIES, subscription.pk): 4}

    with connection.schema_editor() as editor:
        migration.forwards(None, editor)
    assert (
        _kept(SUBSCRIPTION_DELIVERIES)
        == _counted(SUBSCRIPTION_DELIVERIES)
        == {
            counters.key_name(SUBSCRIPTION_DELIVERIES, subscription.pk, "pending"): 3,
            counters.key_name(SUBSCRIPTION_DELIVERIES, subscription.pk, "succeeded"): 1,
        }
    )
    WebhookDelivery.objects.filter(subscription=subscription).update(status=WebhookDeliveryStatus.FAILED)
    assert _kept(SUBSCRIPTION_DELIVERIES) == {counters.key_name(SUBSCRIPTION_DELIVERIES, subscription.pk, "failed"): 4}
