"""Grouped kept counts (core.db.counters; docs/decisions.md#lists): a poster's tasks per status
(`tasks.poster.<poster hex>.<status>`) and a task's bids (`tasks.bids.<task hex>`), for the `total` of
`GET /api/v1/tasks?scope=mine` and `GET /api/v1/tasks/{id}/bids`; seeded with the rows already there. And the
index of a poster's tasks of one status in the list's order.

Literal here: a migration does not import the app's current code. The SQL is what
`core.db.counters.install_sql` produced with `key=` and `versions=False` (no page is kept under these counts:
only the count, and no write for a change in place) when it was frozen here; replaying this migration
installs that, whatever core.db.counters says later."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import migrations, models

POSTGRESQL_FORWARD = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'tasks.poster' || '.' || "
 "replace(CAST(tasks_market_task.poster_id AS TEXT), '-', '') || '.' || replace(CAST(tasks_market_task.status AS "
 "TEXT), '-', ''), 0, count(*) FROM tasks_market_task WHERE true GROUP BY 1",
 'CREATE OR REPLACE FUNCTION core_counter_tasks_poster() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.poster' || '.' || "
 "replace(CAST(r.poster_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, 1 AS delta "
 'FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END '
 'LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.poster' || '.' || "
 "replace(CAST(r.poster_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, -1 AS delta "
 'FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END '
 'LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.poster' || '.' || "
 "replace(CAST(r.poster_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, 1 AS delta "
 "FROM new_rows r WHERE true UNION ALL SELECT 'tasks.poster' || '.' || replace(CAST(r.poster_id AS TEXT), '-', '') "
 "|| '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k "
 'ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_insert ON tasks_market_task',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_update ON tasks_market_task',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_delete ON tasks_market_task',
 'CREATE TRIGGER core_counter_tasks_poster_insert AFTER INSERT ON tasks_market_task REFERENCING NEW TABLE AS '
 'new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_poster()',
 'CREATE TRIGGER core_counter_tasks_poster_update AFTER UPDATE ON tasks_market_task REFERENCING OLD TABLE AS '
 'old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_poster()',
 'CREATE TRIGGER core_counter_tasks_poster_delete AFTER DELETE ON tasks_market_task REFERENCING OLD TABLE AS '
 'old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_poster()',
 "INSERT INTO core_counter (name, shard, value) SELECT 'tasks.bids' || '.' || replace(CAST(tasks_market_bid.task_id "
 "AS TEXT), '-', ''), 0, count(*) FROM tasks_market_bid WHERE true GROUP BY 1",
 'CREATE OR REPLACE FUNCTION core_counter_tasks_bids() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.bids' || '.' || "
 "replace(CAST(r.task_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY k "
 'LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.bids' || '.' || "
 "replace(CAST(r.task_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY "
 'k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'tasks.bids' || '.' || "
 "replace(CAST(r.task_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true UNION ALL SELECT "
 "'tasks.bids' || '.' || replace(CAST(r.task_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) "
 'keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_insert ON tasks_market_bid',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_update ON tasks_market_bid',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_delete ON tasks_market_bid',
 'CREATE TRIGGER core_counter_tasks_bids_insert AFTER INSERT ON tasks_market_bid REFERENCING NEW TABLE AS new_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_bids()',
 'CREATE TRIGGER core_counter_tasks_bids_update AFTER UPDATE ON tasks_market_bid REFERENCING OLD TABLE AS old_rows '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_bids()',
 'CREATE TRIGGER core_counter_tasks_bids_delete AFTER DELETE ON tasks_market_bid REFERENCING OLD TABLE AS old_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_bids()']

POSTGRESQL_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_tasks_bids_insert ON tasks_market_bid',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_update ON tasks_market_bid',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_delete ON tasks_market_bid',
 'DROP FUNCTION IF EXISTS core_counter_tasks_bids()',
 "DELETE FROM core_counter WHERE substr(name, 1, 11) = 'tasks.bids.'",
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_insert ON tasks_market_task',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_update ON tasks_market_task',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_delete ON tasks_market_task',
 'DROP FUNCTION IF EXISTS core_counter_tasks_poster()',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'tasks.poster.'"]

SQLITE_FORWARD = ["INSERT INTO core_counter (name, shard, value) SELECT 'tasks.poster' || '.' || "
 "replace(CAST(tasks_market_task.poster_id AS TEXT), '-', '') || '.' || replace(CAST(tasks_market_task.status AS "
 "TEXT), '-', ''), 0, count(*) FROM tasks_market_task WHERE true GROUP BY 1",
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_insert',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_delete',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_in',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_out',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_stay',
 'CREATE TRIGGER core_counter_tasks_poster_insert AFTER INSERT ON tasks_market_task WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('tasks.poster' || '.' || replace(CAST(NEW.poster_id AS TEXT), '-', '') "
 "|| '.' || replace(CAST(NEW.status AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value "
 '+ excluded.value; END',
 'CREATE TRIGGER core_counter_tasks_poster_delete AFTER DELETE ON tasks_market_task WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('tasks.poster' || '.' || replace(CAST(OLD.poster_id AS TEXT), '-', '') "
 "|| '.' || replace(CAST(OLD.status AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value "
 '+ excluded.value; END',
 'CREATE TRIGGER core_counter_tasks_poster_in AFTER UPDATE ON tasks_market_task WHEN (true) AND NOT ((true) AND '
 "(true) AND 'tasks.poster' || '.' || replace(CAST(NEW.poster_id AS TEXT), '-', '') || '.' || "
 "replace(CAST(NEW.status AS TEXT), '-', '') = 'tasks.poster' || '.' || replace(CAST(OLD.poster_id AS TEXT), '-', "
 "'') || '.' || replace(CAST(OLD.status AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) "
 "VALUES ('tasks.poster' || '.' || replace(CAST(NEW.poster_id AS TEXT), '-', '') || '.' || replace(CAST(NEW.status "
 "AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END",
 'CREATE TRIGGER core_counter_tasks_poster_out AFTER UPDATE ON tasks_market_task WHEN (true) AND NOT ((true) AND '
 "(true) AND 'tasks.poster' || '.' || replace(CAST(NEW.poster_id AS TEXT), '-', '') || '.' || "
 "replace(CAST(NEW.status AS TEXT), '-', '') = 'tasks.poster' || '.' || replace(CAST(OLD.poster_id AS TEXT), '-', "
 "'') || '.' || replace(CAST(OLD.status AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) "
 "VALUES ('tasks.poster' || '.' || replace(CAST(OLD.poster_id AS TEXT), '-', '') || '.' || replace(CAST(OLD.status "
 "AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END",
 "INSERT INTO core_counter (name, shard, value) SELECT 'tasks.bids' || '.' || replace(CAST(tasks_market_bid.task_id "
 "AS TEXT), '-', ''), 0, count(*) FROM tasks_market_bid WHERE true GROUP BY 1",
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_insert',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_delete',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_in',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_out',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_stay',
 'CREATE TRIGGER core_counter_tasks_bids_insert AFTER INSERT ON tasks_market_bid WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('tasks.bids' || '.' || replace(CAST(NEW.task_id AS TEXT), '-', ''), 0, "
 '1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_tasks_bids_delete AFTER DELETE ON tasks_market_bid WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('tasks.bids' || '.' || replace(CAST(OLD.task_id AS TEXT), '-', ''), 0, "
 '-1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_tasks_bids_in AFTER UPDATE ON tasks_market_bid WHEN (true) AND NOT ((true) AND (true) '
 "AND 'tasks.bids' || '.' || replace(CAST(NEW.task_id AS TEXT), '-', '') = 'tasks.bids' || '.' || "
 "replace(CAST(OLD.task_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('tasks.bids' || '.' || replace(CAST(NEW.task_id AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET "
 'value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_tasks_bids_out AFTER UPDATE ON tasks_market_bid WHEN (true) AND NOT ((true) AND (true) '
 "AND 'tasks.bids' || '.' || replace(CAST(NEW.task_id AS TEXT), '-', '') = 'tasks.bids' || '.' || "
 "replace(CAST(OLD.task_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('tasks.bids' || '.' || replace(CAST(OLD.task_id AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END']

SQLITE_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_tasks_bids_insert',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_delete',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_in',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_out',
 'DROP TRIGGER IF EXISTS core_counter_tasks_bids_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 11) = 'tasks.bids.'",
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_insert',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_delete',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_in',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_out',
 'DROP TRIGGER IF EXISTS core_counter_tasks_poster_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'tasks.poster.'"]


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
        ("tasks_market", "0013_agent_reputation_and_reviews"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="task",
            index=models.Index(fields=["poster", "status", "-created_at", "-id"], name="task_poster_status_created"),
        ),
        migrations.RunPython(forwards, backwards),
    ]
