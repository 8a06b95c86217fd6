"""A grouped kept count of each user's usable (not revoked) API keys (`apikeys.user.<user hex>`;
core.db.counters; docs/decisions.md#lists), for the `total` of `GET /api/v1/auth/api-keys`; seeded with the keys
already there. A revoke moves a key out of its count.

Literal here: a migration does not import the app's current code. The SQL is what
`core.db.counters.install_sql` produced with `key=("user_id",)` and `versions=False` when it was frozen here;
replaying this migration installs that, whatever core.db.counters says later."""

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
 "INSERT INTO core_counter (name, shard, value) SELECT 'apikeys.user' || '.' || replace(CAST(accounts_apikey.user_id "
 "AS TEXT), '-', ''), 0, count(*) FROM accounts_apikey WHERE accounts_apikey.revoked_at IS NULL GROUP BY 1",
 'CREATE OR REPLACE FUNCTION core_counter_apikeys_user() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'apikeys.user' || '.' || "
 "replace(CAST(r.user_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE r.revoked_at IS NULL) keyed GROUP "
 'BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'apikeys.user' || '.' || "
 "replace(CAST(r.user_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE r.revoked_at IS NULL) keyed "
 'GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'apikeys.user' || '.' || "
 "replace(CAST(r.user_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE r.revoked_at IS NULL UNION ALL "
 "SELECT 'apikeys.user' || '.' || replace(CAST(r.user_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE "
 'r.revoked_at IS NULL) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_insert ON accounts_apikey',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_update ON accounts_apikey',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_delete ON accounts_apikey',
 'CREATE TRIGGER core_counter_apikeys_user_insert AFTER INSERT ON accounts_apikey REFERENCING NEW TABLE AS new_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_apikeys_user()',
 'CREATE TRIGGER core_counter_apikeys_user_update AFTER UPDATE ON accounts_apikey REFERENCING OLD TABLE AS old_rows '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_apikeys_user()',
 'CREATE TRIGGER core_counter_apikeys_user_delete AFTER DELETE ON accounts_apikey REFERENCING OLD TABLE AS old_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_apikeys_user()']

POSTGRESQL_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_apikeys_user_insert ON accounts_apikey',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_update ON accounts_apikey',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_delete ON accounts_apikey',
 'DROP FUNCTION IF EXISTS core_counter_apikeys_user()',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'apikeys.user.'"]

SQLITE_FORWARD = ["INSERT INTO core_counter (name, shard, value) SELECT 'apikeys.user' || '.' || replace(CAST(accounts_apikey.user_id "
 "AS TEXT), '-', ''), 0, count(*) FROM accounts_apikey WHERE accounts_apikey.revoked_at IS NULL GROUP BY 1",
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_insert',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_delete',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_in',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_out',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_stay',
 'CREATE TRIGGER core_counter_apikeys_user_insert AFTER INSERT ON accounts_apikey WHEN NEW.revoked_at IS NULL BEGIN '
 "INSERT INTO core_counter (name, shard, value) VALUES ('apikeys.user' || '.' || replace(CAST(NEW.user_id AS TEXT), "
 "'-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END",
 'CREATE TRIGGER core_counter_apikeys_user_delete AFTER DELETE ON accounts_apikey WHEN OLD.revoked_at IS NULL BEGIN '
 "INSERT INTO core_counter (name, shard, value) VALUES ('apikeys.user' || '.' || replace(CAST(OLD.user_id AS TEXT), "
 "'-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END",
 'CREATE TRIGGER core_counter_apikeys_user_in AFTER UPDATE ON accounts_apikey WHEN (NEW.revoked_at IS NULL) AND NOT '
 "((NEW.revoked_at IS NULL) AND (OLD.revoked_at IS NULL) AND 'apikeys.user' || '.' || replace(CAST(NEW.user_id AS "
 "TEXT), '-', '') = 'apikeys.user' || '.' || replace(CAST(OLD.user_id AS TEXT), '-', '')) BEGIN INSERT INTO "
 "core_counter (name, shard, value) VALUES ('apikeys.user' || '.' || replace(CAST(NEW.user_id AS TEXT), '-', ''), 0, "
 '1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_apikeys_user_out AFTER UPDATE ON accounts_apikey WHEN (OLD.revoked_at IS NULL) AND NOT '
 "((NEW.revoked_at IS NULL) AND (OLD.revoked_at IS NULL) AND 'apikeys.user' || '.' || replace(CAST(NEW.user_id AS "
 "TEXT), '-', '') = 'apikeys.user' || '.' || replace(CAST(OLD.user_id AS TEXT), '-', '')) BEGIN INSERT INTO "
 "core_counter (name, shard, value) VALUES ('apikeys.user' || '.' || replace(CAST(OLD.user_id AS TEXT), '-', ''), 0, "
 '-1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END']

SQLITE_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_apikeys_user_insert',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_delete',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_in',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_out',
 'DROP TRIGGER IF EXISTS core_counter_apikeys_user_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 13) = 'apikeys.user.'"]


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
        ("core", "0009_counter_version"),  # on SQLite, after the last rebuild of core_counter
        ("accounts", "0007_user_credits_to_assistant"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
