"""The open-task count, kept by triggers in the same transaction as every write (core.db.counters;
docs/decisions.md#lists). Literal here: a migration does not import the app's current code. The SQL is
what `core.db.counters.install_sql` produced for this count with `versions=False` (the count alone, seeded
with the open tasks already there) when it was frozen here, after 0008 came; replaying this migration
installs that, whatever core.db.counters says later. (Its first release differed only in whitespace and in
lacking the `DROP TRIGGER IF EXISTS` statements, no-ops on a database migrating forward.) 0008 adds the
versions."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations

POSTGRESQL_DROP_TRIGGERS = [
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_insert ON tasks_market_task",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_update ON tasks_market_task",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_delete ON tasks_market_task",
]

POSTGRESQL_FORWARD = [
    """
CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF delta <> 0 THEN
        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)
        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;
    END IF;
END $$""",
    (
        "INSERT INTO core_counter (name, shard, value) SELECT 'tasks.open', 0, count(*) FROM tasks_market_task "
        "WHERE tasks_market_task.status = 'open'"
    ),
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
    *POSTGRESQL_DROP_TRIGGERS,
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

POSTGRESQL_BACKWARD = [
    *POSTGRESQL_DROP_TRIGGERS,
    "DROP FUNCTION IF EXISTS core_counter_tasks_open()",
    "DELETE FROM core_counter WHERE name = 'tasks.open'",
]

# Every trigger name the count has had on SQLite (`_stay` came with the versions, 0008).
SQLITE_DROP_TRIGGERS = [
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_insert",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_delete",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_in",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_out",
    "DROP TRIGGER IF EXISTS core_counter_tasks_open_stay",
]

SQLITE_FORWARD = [
    (
        "INSERT INTO core_counter (name, shard, value) SELECT 'tasks.open', 0, count(*) FROM tasks_market_task "
        "WHERE tasks_market_task.status = 'open'"
    ),
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

SQLITE_BACKWARD = [
    *SQLITE_DROP_TRIGGERS,
    "DELETE FROM core_counter WHERE name = 'tasks.open'",
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
        ("core", "0008_counter"),
        ("tasks_market", "0004_list_order_indexes"),
    ]

    operations = [
        # The count alone; 0008 adds the versions.
        migrations.RunPython(forwards, backwards),
    ]
