"""Counts kept exactly, in O(1) to read (docs/decisions.md#lists).

A list whose `total` must not cost a scan of its rows keeps its count in `core.models.Counter`: one row per
(name, shard). Database triggers that an app's migration installs add each write's delta in
the same transaction as the write, so every writer (services, the admin, `QuerySet.update`, bulk SQL) keeps
it, and a rolled-back write takes its delta with it. On PostgreSQL the trigger is per statement (one
upsert for a bulk insert of a million rows) and writes the shard `pg_backend_pid() % SHARDS`: concurrent
transactions mostly hold different rows, and one transaction always the same row of a count (no lock
cycles between two of them). SQLite has one writer at a time: one shard, row triggers.

Every statement that writes a counted row also raises its shard's `version` (moved or changed in place):
the versions of a count's shards name one state of its rows (`stamp_of`), under which core.db.pagecache
keeps pages of them.

A migration carries its triggers as literal SQL, generated once with `install_sql` and pasted in (a migration
imports no application code: tests/test_migrations_import_no_app_code.py), so replaying it installs what it
installed then; changing a count's condition takes a new migration with its own SQL.

Apps declare what a count counts in their `counters.py` (`register`), which the reconciliation
(`counters_reconcile`, daily in the beat, and `manage.py counters_reconcile`) compares with a COUNT.
Core imports no app.
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable, Sequence

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Count, F, Func, IntegerField, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils.module_loading import autodiscover_modules

from core.db.precompiled import PrecompiledQuery
from core.models import Counter

SHARDS = 16
# A new shard row's version starts at random below this (a quarter of the bigint range: room to count up).
VERSION_START_RANGE = 2**61

_REGISTRY: dict[str, Callable[[], QuerySet]] = {}
_GROUPED: dict[str, tuple[Callable[[], QuerySet], tuple[str, ...]]] = {}


def register(name: str, rows: Callable[[], QuerySet]) -> None:
    """`rows()` is the queryset whose COUNT the count `name` must always equal."""
    _REGISTRY[name] = rows


def register_grouped(family: str, rows: Callable[[], QuerySet], by: Sequence[str]) -> None:
    """A grouped count: for every value of the fields `by` among `rows()`, the count `key_name(family, ...)`
    must equal the COUNT of those rows (e.g. `tasks.poster.<poster>.<status>`)."""
    _GROUPED[family] = (rows, tuple(by))


def registered() -> dict[str, Callable[[], QuerySet]]:
    autodiscover_modules("counters")
    return dict(_REGISTRY)


def registered_grouped() -> dict[str, tuple[Callable[[], QuerySet], tuple[str, ...]]]:
    autodiscover_modules("counters")
    return dict(_GROUPED)


def key_part(value) -> str:
    """One field's part of a grouped count's name, as the triggers write it (`_key_sql`): its text without
    '-' (a UUID's hex, as SQLite stores it)."""
    return (value.hex if isinstance(value, uuid.UUID) else str(value)).replace("-", "")


def key_name(family: str, *values) -> str:
    """The name of one key of a grouped count: the family and each field's `key_part`, joined by '.'."""
    return ".".join([family, *(key_part(value) for value in values)])


def total_of(name: str) -> Coalesce:
    """The count as an expression: a scalar subquery over its (at most SHARDS) rows."""
    summed = Counter.objects.filter(name=name).order_by().values(n=Func(F("value"), function="SUM"))
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def total_of_sum(names: Sequence[str]) -> Coalesce:
    """The sum of several counts (of disjoint rows, e.g. one per status) as an expression, as `total_of`."""
    summed = Counter.objects.filter(name__in=list(names)).order_by().values(n=Func(F("value"), function="SUM"))
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def count_of(name: str) -> int:
    return Counter.objects.filter(name=name).aggregate(n=Sum("value"))["n"] or 0


def sum_of(names) -> int:
    """The sum of several counts (of disjoint rows, e.g. one per category), in one read."""
    return Counter.objects.filter(name__in=list(names)).aggregate(n=Sum("value"))["n"] or 0


_NAME = "\x00counter"  # stands for the count's name in the compiled read (never sent to the database)
_STAMP = PrecompiledQuery(
    lambda name: Counter.objects.filter(name=name).order_by("shard").values_list("shard", "version"),
    [_NAME],
)


def stamp_of(name: str) -> tuple[tuple[int, int], ...]:
    """The count's stamp: the (shard, version) of every shard, in one read. Two reads with the same stamp saw
    the same committed writes of the counted rows (`Counter.version`)."""
    return tuple(tuple(row) for row in _STAMP.rows([name]))


def counters_reconcile(*, fix: bool = True) -> dict[str, dict]:
    """Every registered count against a fresh COUNT: {name: {"kept", "actual", "drift"}}; with `fix`, the
    drift is added to shard 0. The count's shards are locked first, so writers in flight either commit
    before the COUNT (and are in it) or add their delta after this transaction.

    Every grouped count (`register_grouped`) too, one entry per family: {"keys", "kept", "actual", "drift"
    (the sum of each key's drift, unsigned), "drifted": {name: {"kept", "actual", "drift"}}} (`_reconcile_family`)."""
    report: dict[str, dict] = {}
    for name, rows in sorted(registered().items()):
        with transaction.atomic():
            Counter.objects.bulk_create(
                [
                    Counter(name=name, shard=shard, version=secrets.randbelow(VERSION_START_RANGE))
                    for shard in range(SHARDS)
                ],
                ignore_conflicts=True,
            )
            kept = sum(Counter.objects.select_for_update().filter(name=name).values_list("value", flat=True))
            actual = rows().count()
            drift = actual - kept
            if drift and fix:
                Counter.objects.filter(name=name, shard=0).update(value=F("value") + drift, version=F("version") + 1)
        report[name] = {"kept": kept, "actual": actual, "drift": drift}
    for family, (rows, by) in sorted(registered_grouped().items()):
        report[family] = _reconcile_family(family, rows, by, fix=fix)
    return report


def _reconcile_family(family: str, rows: Callable[[], QuerySet], by: tuple[str, ...], *, fix: bool) -> dict:
    """One grouped count against a GROUP BY of its rows. The two are read apart (a million keys are not
    locked at once), so a key that differs is only a suspect: it is then checked as a single count is (its
    shards created and locked, its rows counted) and fixed. A key that counts no row has its shards deleted
    (the triggers leave a key at zero; this removes it): a writer waiting on them inserts its delta anew."""
    prefix = f"{family}."
    kept = dict(
        Counter.objects.filter(name__startswith=prefix)
        .order_by()
        .values("name")
        .annotate(n=Sum("value"))
        .values_list("name", "n")
    )
    actual = {
        key_name(family, *values[:-1]): values[-1]
        for values in rows().order_by().values(*by).annotate(n=Count("pk")).values_list(*by, "n")
    }
    suspects = sorted(key for key in kept.keys() | actual.keys() if kept.get(key, 0) != actual.get(key, 0))
    gone = sorted(key for key, n in kept.items() if n == 0 and key not in actual)
    drifted = {}
    for key in dict.fromkeys([*suspects, *gone]):
        values = key[len(prefix) :].split(".", len(by) - 1)
        with transaction.atomic():
            if fix:
                Counter.objects.bulk_create(
                    [
                        Counter(name=key, shard=shard, version=secrets.randbelow(VERSION_START_RANGE))
                        for shard in range(SHARDS)
                    ],
                    ignore_conflicts=True,
                )
            key_kept = sum(Counter.objects.select_for_update().filter(name=key).values_list("value", flat=True))
            # A key of another shape (the family's keys before a migration grouped them anew) counts no row.
            key_actual = rows().filter(**dict(zip(by, values, strict=True))).count() if len(values) == len(by) else 0
            if fix and key_actual == 0:
                Counter.objects.filter(name=key).delete()
            elif fix and key_actual != key_kept:
                Counter.objects.filter(name=key, shard=0).update(
                    value=F("value") + key_actual - key_kept, version=F("version") + 1
                )
        if key_actual != key_kept:
            drifted[key] = {"kept": key_kept, "actual": key_actual, "drift": key_actual - key_kept}
    return {
        "keys": len(kept.keys() | actual.keys()),
        "kept": sum(kept.values()),
        "actual": sum(actual.values()),
        "drift": sum(abs(row["drift"]) for row in drifted.values()),
        "drifted": drifted,
    }


def install_sql(
    vendor: str,
    *,
    name: str,
    table: str,
    condition: str,
    versions: bool = True,
    seed: bool = True,
    key: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """(forward, reverse) SQL for the triggers that keep count `name` of the rows of `table` for which
    `condition` holds; `condition` names the row as `{row}` (e.g. "{row}.status = 'open'").

    `versions`: the triggers also raise the shard's `version` with every statement that writes a counted
    row, moved in or out or changed in place (core.db.pagecache). Without it, the count alone (the first
    installs, before `Counter.version`). `seed`: count the rows already there (a first install; a
    reinstall over a kept count does not).

    `key`: a grouped count, one per value of these columns among the rows (`register_grouped`): the count
    of each is named `name` and each column's text without '-', joined by '.' (`key_name`), e.g.
    key=("poster_id", "status") keeps `tasks.poster.<poster hex>.<status>`. Keys at zero are left to the
    reconciliation (`_reconcile_family`)."""
    if key is not None:
        return _grouped_install_sql(
            vendor, name=name, table=table, condition=condition, key=tuple(key), versions=versions, seed=seed
        )
    # Names from our own migrations, checked anyway: they are written into the SQL (no parameters in DDL).
    if not re.fullmatch(r"[a-z0-9_.]+", name) or not re.fullmatch(r"[a-z0-9_]+", table):
        raise ValueError(f"not a counter name or table: {name!r} {table!r}")
    slug = name.replace(".", "_")
    # The count of the rows already there, then the triggers, in the migration's transaction.
    seeding = [
        f"INSERT INTO core_counter (name, shard, value) SELECT '{name}', 0, count(*) FROM {table} "  # noqa: S608
        f"WHERE {condition.format(row=table)}"
    ]
    unseed = [f"DELETE FROM core_counter WHERE name = '{name}'"]  # noqa: S608
    if not seed:
        seeding = unseed = []
    if vendor == "postgresql":
        function = f"core_counter_{slug}"
        if versions:
            body = f"""
            DECLARE delta bigint := 0; touched bigint := 0; rows bigint;
            BEGIN
                IF TG_OP IN ('INSERT', 'UPDATE') THEN
                    SELECT count(*) INTO rows FROM new_rows r WHERE {condition.format(row="r")};
                    delta := delta + rows; touched := touched + rows;
                END IF;
                IF TG_OP IN ('DELETE', 'UPDATE') THEN
                    SELECT count(*) INTO rows FROM old_rows r WHERE {condition.format(row="r")};
                    delta := delta - rows; touched := touched + rows;
                END IF;
                IF touched > 0 THEN
                    PERFORM core_counter_touch('{name}', delta);
                END IF;
                RETURN NULL;
            END"""  # noqa: S608
        else:
            body = f"""
            DECLARE delta bigint := 0;
            BEGIN
                IF TG_OP IN ('INSERT', 'UPDATE') THEN
                    SELECT delta + count(*) INTO delta FROM new_rows r WHERE {condition.format(row="r")};
                END IF;
                IF TG_OP IN ('DELETE', 'UPDATE') THEN
                    SELECT delta - count(*) INTO delta FROM old_rows r WHERE {condition.format(row="r")};
                END IF;
                PERFORM core_counter_add('{name}', delta);
                RETURN NULL;
            END"""  # noqa: S608
        return _pg_statement_triggers(function, table, body, versions=versions, seeding=seeding, unseed=unseed)
    if vendor == "sqlite":
        new, old = condition.format(row="NEW"), condition.format(row="OLD")

        def add(delta: int) -> str:
            if versions:
                return (
                    f"INSERT INTO core_counter (name, shard, value, version) "  # noqa: S608
                    f"VALUES ('{name}', 0, {delta}, {_SQLITE_START}) "
                    f"ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1;"
                )
            return (
                f"INSERT INTO core_counter (name, shard, value) VALUES ('{name}', 0, {delta}) "  # noqa: S608
                f"ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value;"
            )

        trigger = f"core_counter_{slug}"
        drop = [f"DROP TRIGGER IF EXISTS {trigger}_{kind}" for kind in ("insert", "delete", "in", "out", "stay")]
        forward = [
            *seeding,
            *drop,
            f"CREATE TRIGGER {trigger}_insert AFTER INSERT ON {table} WHEN {new} BEGIN {add(1)} END",
            f"CREATE TRIGGER {trigger}_delete AFTER DELETE ON {table} WHEN {old} BEGIN {add(-1)} END",
            f"CREATE TRIGGER {trigger}_in AFTER UPDATE ON {table} WHEN ({new}) AND NOT ({old}) BEGIN {add(1)} END",
            f"CREATE TRIGGER {trigger}_out AFTER UPDATE ON {table} WHEN ({old}) AND NOT ({new}) BEGIN {add(-1)} END",
        ]
        if versions:  # a counted row changed in place: no delta, a new version
            forward.append(
                f"CREATE TRIGGER {trigger}_stay AFTER UPDATE ON {table} WHEN ({old}) AND ({new}) BEGIN {add(0)} END"
            )
        reverse = [*drop, *unseed]
        return forward, reverse
    raise ImproperlyConfigured(f"kept counts need PostgreSQL or SQLite, not {vendor}")  # the two supported engines


def _key_sql(name: str, key: tuple[str, ...], row: str) -> str:
    """The SQL of a grouped count's name for `row` (the same text in both engines; `key_name` in Python)."""
    parts = [f"replace(CAST({row}.{column} AS TEXT), '-', '')" for column in key]
    return " || '.' || ".join([f"'{name}'", *parts])


def _grouped_install_sql(
    vendor: str, *, name: str, table: str, condition: str, key: tuple[str, ...], versions: bool, seed: bool
) -> tuple[list[str], list[str]]:
    """`install_sql` of a grouped count: PostgreSQL per statement, one upsert per key that the statement
    wrote (in the keys' order: two statements of one shard never lock two keys in opposite orders); SQLite
    per row, the key's name computed with `||`."""
    if (
        not re.fullmatch(r"[a-z0-9_.]+", name)
        or not re.fullmatch(r"[a-z0-9_]+", table)
        or not all(re.fullmatch(r"[a-z0-9_]+", column) for column in key)
        or not key
    ):
        raise ValueError(f"not a counter name, table or key: {name!r} {table!r} {key!r}")
    slug = name.replace(".", "_")
    seeding = [
        f"INSERT INTO core_counter (name, shard, value) SELECT {_key_sql(name, key, table)}, 0, count(*) "  # noqa: S608
        f"FROM {table} WHERE {condition.format(row=table)} GROUP BY 1"
    ]
    prefix = f"{name}."
    unseed = [f"DELETE FROM core_counter WHERE substr(name, 1, {len(prefix)}) = '{prefix}'"]  # noqa: S608
    if not seed:
        seeding = unseed = []
    if vendor == "postgresql":
        function = f"core_counter_{slug}"
        add = "core_counter_touch" if versions else "core_counter_add"
        new_keys = (
            f"SELECT {_key_sql(name, key, 'r')} AS k, 1 AS delta FROM new_rows r WHERE {condition.format(row='r')}"  # noqa: S608
        )
        old_keys = (
            f"SELECT {_key_sql(name, key, 'r')} AS k, -1 AS delta FROM old_rows r WHERE {condition.format(row='r')}"  # noqa: S608
        )

        def each_key(rows: str) -> str:  # a transition table exists only for its operations: one loop each
            return (
                f"FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM ({rows}) keyed GROUP BY k ORDER BY k "  # noqa: S608
                f"LOOP PERFORM {add}(moved.k, moved.delta); END LOOP;"
            )

        body = f"""
            DECLARE moved record;
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    {each_key(new_keys)}
                ELSIF TG_OP = 'DELETE' THEN
                    {each_key(old_keys)}
                ELSE
                    {each_key(f"{new_keys} UNION ALL {old_keys}")}
                END IF;
                RETURN NULL;
            END"""
        return _pg_statement_triggers(function, table, body, versions=versions, seeding=seeding, unseed=unseed)
    if vendor == "sqlite":
        new, old = condition.format(row="NEW"), condition.format(row="OLD")
        new_key, old_key = _key_sql(name, key, "NEW"), _key_sql(name, key, "OLD")
        same = f"({new}) AND ({old}) AND {new_key} = {old_key}"

        def add(counter: str, delta: int) -> str:
            if versions:
                return (
                    f"INSERT INTO core_counter (name, shard, value, version) "  # noqa: S608
                    f"VALUES ({counter}, 0, {delta}, {_SQLITE_START}) "
                    f"ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1;"
                )
            return (
                f"INSERT INTO core_counter (name, shard, value) VALUES ({counter}, 0, {delta}) "  # noqa: S608
                f"ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value;"
            )

        trigger = f"core_counter_{slug}"
        drop = [f"DROP TRIGGER IF EXISTS {trigger}_{kind}" for kind in ("insert", "delete", "in", "out", "stay")]
        forward = [
            *seeding,
            *drop,
            f"CREATE TRIGGER {trigger}_insert AFTER INSERT ON {table} WHEN {new} BEGIN {add(new_key, 1)} END",
            f"CREATE TRIGGER {trigger}_delete AFTER DELETE ON {table} WHEN {old} BEGIN {add(old_key, -1)} END",
            f"CREATE TRIGGER {trigger}_in AFTER UPDATE ON {table} WHEN ({new}) AND NOT ({same}) "
            f"BEGIN {add(new_key, 1)} END",
            f"CREATE TRIGGER {trigger}_out AFTER UPDATE ON {table} WHEN ({old}) AND NOT ({same}) "
            f"BEGIN {add(old_key, -1)} END",
        ]
        if versions:  # a counted row changed in place, under the same key: no delta, a new version
            forward.append(
                f"CREATE TRIGGER {trigger}_stay AFTER UPDATE ON {table} WHEN {same} BEGIN {add(new_key, 0)} END"
            )
        reverse = [*drop, *unseed]
        return forward, reverse
    raise ImproperlyConfigured(f"kept counts need PostgreSQL or SQLite, not {vendor}")  # the two supported engines


def _pg_statement_triggers(
    function: str, table: str, body: str, *, versions: bool, seeding: list[str], unseed: list[str]
) -> tuple[list[str], list[str]]:
    """(forward, reverse) SQL of a count's PostgreSQL function `body` and its three statement triggers."""
    drop = [f"DROP TRIGGER IF EXISTS {function}_{op} ON {table}" for op in ("insert", "update", "delete")]
    forward = [
        _PG_TOUCH if versions else _PG_ADD,
        *seeding,
        f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $${body} $$",
        *drop,
        f"CREATE TRIGGER {function}_insert AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        f"CREATE TRIGGER {function}_update AFTER UPDATE ON {table} REFERENCING OLD TABLE AS old_rows "
        f"NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        f"CREATE TRIGGER {function}_delete AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
    ]
    return forward, [*drop, f"DROP FUNCTION IF EXISTS {function}()", *unseed]


_PG_ADD = f"""
CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF delta <> 0 THEN
        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % {SHARDS}, delta)
        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;
    END IF;
END $$"""  # noqa: S608

# A shard row is written under its row lock, so its versions follow one another in commit order: a
# snapshot that sees version v of a shard sees every earlier write of that shard and none after.
_PG_TOUCH = f"""
CREATE OR REPLACE FUNCTION core_counter_touch(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO core_counter (name, shard, value, version)
    VALUES (counter, pg_backend_pid() % {SHARDS}, delta, (random() * {VERSION_START_RANGE})::bigint)
    ON CONFLICT (name, shard) DO UPDATE
    SET value = core_counter.value + EXCLUDED.value, version = core_counter.version + 1;
END $$"""  # noqa: S608

_SQLITE_START = f"abs(random() % {VERSION_START_RANGE})"
