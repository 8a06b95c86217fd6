"""The open-task count's triggers also raise its shards' versions, under which a process keeps pages of the
open list (core.db.pagecache; docs/decisions.md#open-list-pages). Literal here: a migration does not import
the app's current code. The SQL is what `core.db.counters.install_sql` produced for this count, frozen as
text: forward with the versions (`seed=False`: the count is kept as it is), backward the count alone as
0005 installed it (`versions=False, seed=False`); replaying this migration installs that, whatever
core.db.counters says later."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations

# Dropped and created again in both directions: the statement triggers call the function by name.
POSTGRESQL_TRIGGERS = [
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_insert ON tasks_market_task",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_update ON tasks_market_task",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_delete ON tasks_market_task",
    (
        "CREATE TRIGGER core_counter_tasks_open_insert AFTER INSERT ON tasks_market_task "
        "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_open()"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_update AFTER UPDATE ON tasks_market_task "
        "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "
        "core_counter_tasks_open()"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_delete AFTER DELETE ON tasks_market_task "
        "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_open()"
    ),
]

POSTGRESQL_FORWARD = [
    """
CREATE OR REPLACE FUNCTION core_counter_touch(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO core_counter (name, shard, value, version)
    VALUES (counter, pg_backend_pid() % 16, delta, (random() * 2305843009213693952)::bigint)
    ON CONFLICT (name, shard) DO UPDATE
    SET value = core_counter.value + EXCLUDED.value, version = core_counter.version + 1;
END $$""",
    """CREATE OR REPLACE FUNCTION core_counter_tasks_open() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE delta bigint := 0; touched bigint := 0; rows bigint;
            BEGIN
                IF TG_OP IN ('INSERT', 'UPDATE') THEN
                    SELECT count(*) INTO rows FROM new_rows r WHERE r.status = 'open';
                    delta := delta + rows; touched := touched + rows;
                END IF;
                IF TG_OP IN ('DELETE', 'UPDATE') THEN
                    SELECT count(*) INTO rows FROM old_rows r WHERE r.status = 'open';
                    delta := delta - rows; touched := touched + rows;
                END IF;
                IF touched > 0 THEN
                    PERFORM core_counter_touch('tasks.open', delta);
                END IF;
                RETURN NULL;
            END $$""",
    *POSTGRESQL_TRIGGERS,
]

POSTGRESQL_BACKWARD = [
    """
CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF delta <> 0 THEN
        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)
        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;
    END IF;
END $$""",
    """CREATE OR REPLACE FUNCTION core_counter_tasks_open() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE delta bigint := 0;
            BEGIN
                IF TG_OP IN ('INSERT', 'UPDATE') THEN
                    SELECT delta + count(*) INTO delta FROM new_rows r WHERE r.status = 'open';
                END IF;
                IF TG_OP IN ('DELETE', 'UPDATE') THEN
                    SELECT delta - count(*) INTO delta FROM old_rows r WHERE r.status = 'open';
                END IF;
                PERFORM core_counter_add('tasks.open', delta);
                RETURN NULL;
            END $$""",
    *POSTGRESQL_TRIGGERS,
]

# Every trigger name the count has on SQLite, dropped before either direction creates its own.
SQLITE_DROP_TRIGGERS = [
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_insert",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_delete",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_in",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_out",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_stay",
]

SQLITE_FORWARD = [
    *SQLITE_DROP_TRIGGERS,
    (
        "CREATE TRIGGER core_counter_tasks_open_insert AFTER INSERT ON tasks_market_task "
        "WHEN NEW.status = 'open' "
        "BEGIN INSERT INTO core_counter (name, shard, value, version) "
        "VALUES ('tasks.open', 0, 1, abs(random() % 2305843009213693952)) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_delete AFTER DELETE ON tasks_market_task "
        "WHEN OLD.status = 'open' "
        "BEGIN INSERT INTO core_counter (name, shard, value, version) "
        "VALUES ('tasks.open', 0, -1, abs(random() % 2305843009213693952)) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_in AFTER UPDATE ON tasks_market_task "
        "WHEN (NEW.status = 'open') AND NOT (OLD.status = 'open') "
        "BEGIN INSERT INTO core_counter (name, shard, value, version) "
        "VALUES ('tasks.open', 0, 1, abs(random() % 2305843009213693952)) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_out AFTER UPDATE ON tasks_market_task "
        "WHEN (OLD.status = 'open') AND NOT (NEW.status = 'open') "
        "BEGIN INSERT INTO core_counter (name, shard, value, version) "
        "VALUES ('tasks.open', 0, -1, abs(random() % 2305843009213693952)) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1; END"
    ),
    # A counted row changed in place: no delta, a new version.
    (
        "CREATE TRIGGER core_counter_tasks_open_stay AFTER UPDATE ON tasks_market_task "
        "WHEN (OLD.status = 'open') AND (NEW.status = 'open') "
        "BEGIN INSERT INTO core_counter (name, shard, value, version) "
        "VALUES ('tasks.open', 0, 0, abs(random() % 2305843009213693952)) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value, version = version + 1; END"
    ),
]

SQLITE_BACKWARD = [
    *SQLITE_DROP_TRIGGERS,
    (
        "CREATE TRIGGER core_counter_tasks_open_insert AFTER INSERT ON tasks_market_task "
        "WHEN NEW.status = 'open' "
        "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('tasks.open', 0, 1) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_delete AFTER DELETE ON tasks_market_task "
        "WHEN OLD.status = 'open' "
        "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('tasks.open', 0, -1) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_in AFTER UPDATE ON tasks_market_task "
        "WHEN (NEW.status = 'open') AND NOT (OLD.status = 'open') "
        "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('tasks.open', 0, 1) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_out AFTER UPDATE ON tasks_market_task "
        "WHEN (OLD.status = 'open') AND NOT (NEW.status = 'open') "
        "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('tasks.open', 0, -1) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END"
    ),
]

FORWARD = {"postgresql": POSTGRESQL_FORWARD, "sqlite": SQLITE_FORWARD}
BACKWARD = {"postgresql": POSTGRESQL_BACKWARD, "sqlite": SQLITE_BACKWARD}


def _execute(statements, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in statements:  # as core.db.counters.install_sql did: the two supported engines
        raise ImproperlyConfigured(f"kept counts need PostgreSQL or SQLite, not {vendor}")
    for statement in statements[vendor]:
        schema_editor.execute(statement, params=None)  # literal SQL: its % is SQL's, not a placeholder


def forwards(apps, schema_editor):
    _execute(FORWARD, schema_editor)


def backwards(apps, schema_editor):
    _execute(BACKWARD, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0009_counter_version"),
        ("tasks_market", "0007_admin_change_list_indexes"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
