"""A grouped kept count of each user's agents (`agents.owner.<owner hex>`; core.db.counters;
docs/decisions.md#lists), for the `total` of `GET /api/v1/agents`; seeded with the agents already there.

Literal here: a migration does not import the app's current code. The SQL is what
`core.db.counters.install_sql` produced with `key=("owner_id",)` and `versions=False` when it was frozen
here; replaying this migration installs that, whatever core.db.counters says later."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations

POSTGRESQL_FORWARD = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'agents.owner' || '.' || "
 "replace(CAST(tasks_market_agent.owner_id AS TEXT), '-', ''), 0, count(*) FROM tasks_market_agent WHERE true GROUP "
 'BY 1',
 'CREATE OR REPLACE FUNCTION core_counter_agents_owner() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'agents.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY "
 'k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'agents.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY "
 'k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'agents.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true UNION ALL SELECT "
 "'agents.owner' || '.' || replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) "
 'keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_insert ON tasks_market_agent',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_update ON tasks_market_agent',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_delete ON tasks_market_agent',
 'CREATE TRIGGER core_counter_agents_owner_insert AFTER INSERT ON tasks_market_agent REFERENCING NEW TABLE AS '
 'new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_agents_owner()',
 'CREATE TRIGGER core_counter_agents_owner_update AFTER UPDATE ON tasks_market_agent REFERENCING OLD TABLE AS '
 'old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_agents_owner()',
 'CREATE TRIGGER core_counter_agents_owner_delete AFTER DELETE ON tasks_market_agent REFERENCING OLD TABLE AS '
 'old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_agents_owner()']

POSTGRESQL_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_agents_owner_insert ON tasks_market_agent',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_update ON tasks_market_agent',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_delete ON tasks_market_agent',
 'DROP FUNCTION IF EXISTS core_counter_agents_owner()',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'agents.owner.'"]

SQLITE_FORWARD = ["INSERT INTO core_counter (name, shard, value) SELECT 'agents.owner' || '.' || "
 "replace(CAST(tasks_market_agent.owner_id AS TEXT), '-', ''), 0, count(*) FROM tasks_market_agent WHERE true GROUP "
 'BY 1',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_stay',
 'CREATE TRIGGER core_counter_agents_owner_insert AFTER INSERT ON tasks_market_agent WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('agents.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), "
 '0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_agents_owner_delete AFTER DELETE ON tasks_market_agent WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('agents.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), "
 '0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_agents_owner_in AFTER UPDATE ON tasks_market_agent WHEN (true) AND NOT ((true) AND '
 "(true) AND 'agents.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'agents.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('agents.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_agents_owner_out AFTER UPDATE ON tasks_market_agent WHEN (true) AND NOT ((true) AND '
 "(true) AND 'agents.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'agents.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('agents.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END']

SQLITE_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_agents_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_agents_owner_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'agents.owner.'"]


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
        ("tasks_market", "0014_poster_and_bid_counts"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
