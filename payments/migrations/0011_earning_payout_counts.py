"""Grouped kept counts of each seller's earnings (`earnings.owner.<owner hex>`) and payouts
(`payouts.owner.<owner hex>`; core.db.counters; docs/decisions.md#lists), for the `total` of
`GET /api/v1/payouts/earnings` and `GET /api/v1/payouts`; seeded with the rows already there. Every row is
counted (both lists show every status); money rows are never deleted (migration 0008). A later migration
that rebuilds one of these tables on SQLite drops its triggers with the old table and must install them again.

Literal here: a migration does not import the app's current code. The SQL is what
`core.db.counters.install_sql` produced with `condition="true"`, `key=("owner_id",)` and `versions=False`
when it was frozen here (one call per family); replaying this migration installs that, whatever
core.db.counters says later."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations

EARNINGS_POSTGRESQL_FORWARD = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'earnings.owner' || '.' || "
 "replace(CAST(payments_earning.owner_id AS TEXT), '-', ''), 0, count(*) FROM payments_earning WHERE true GROUP BY 1",
 'CREATE OR REPLACE FUNCTION core_counter_earnings_owner() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'earnings.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY k "
 'LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'earnings.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY k "
 'LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'earnings.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true UNION ALL SELECT "
 "'earnings.owner' || '.' || replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) "
 'keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_insert ON payments_earning',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_update ON payments_earning',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_delete ON payments_earning',
 'CREATE TRIGGER core_counter_earnings_owner_insert AFTER INSERT ON payments_earning REFERENCING NEW TABLE AS new_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_earnings_owner()',
 'CREATE TRIGGER core_counter_earnings_owner_update AFTER UPDATE ON payments_earning REFERENCING OLD TABLE AS old_rows '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_earnings_owner()',
 'CREATE TRIGGER core_counter_earnings_owner_delete AFTER DELETE ON payments_earning REFERENCING OLD TABLE AS old_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_earnings_owner()']

EARNINGS_POSTGRESQL_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_earnings_owner_insert ON payments_earning',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_update ON payments_earning',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_delete ON payments_earning',
 'DROP FUNCTION IF EXISTS core_counter_earnings_owner()',
 "DELETE FROM core_counter WHERE substr(name, 1, 15) = 'earnings.owner.'"]

EARNINGS_SQLITE_FORWARD = ["INSERT INTO core_counter (name, shard, value) SELECT 'earnings.owner' || '.' || "
 "replace(CAST(payments_earning.owner_id AS TEXT), '-', ''), 0, count(*) FROM payments_earning WHERE true GROUP BY 1",
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_stay',
 'CREATE TRIGGER core_counter_earnings_owner_insert AFTER INSERT ON payments_earning WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('earnings.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), "
 '0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_earnings_owner_delete AFTER DELETE ON payments_earning WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('earnings.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), "
 '0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_earnings_owner_in AFTER UPDATE ON payments_earning WHEN (true) AND NOT ((true) AND '
 "(true) AND 'earnings.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'earnings.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('earnings.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_earnings_owner_out AFTER UPDATE ON payments_earning WHEN (true) AND NOT ((true) AND '
 "(true) AND 'earnings.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'earnings.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('earnings.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END']

EARNINGS_SQLITE_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_earnings_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_earnings_owner_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 15) = 'earnings.owner.'"]

PAYOUTS_POSTGRESQL_FORWARD = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'payouts.owner' || '.' || replace(CAST(payments_payout.owner_id "
 "AS TEXT), '-', ''), 0, count(*) FROM payments_payout WHERE true GROUP BY 1",
 'CREATE OR REPLACE FUNCTION core_counter_payouts_owner() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'payouts.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY k "
 'LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'payouts.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY k "
 'LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'payouts.owner' || '.' || "
 "replace(CAST(r.owner_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true UNION ALL SELECT "
 "'payouts.owner' || '.' || replace(CAST(r.owner_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) "
 'keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_insert ON payments_payout',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_update ON payments_payout',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_delete ON payments_payout',
 'CREATE TRIGGER core_counter_payouts_owner_insert AFTER INSERT ON payments_payout REFERENCING NEW TABLE AS new_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_payouts_owner()',
 'CREATE TRIGGER core_counter_payouts_owner_update AFTER UPDATE ON payments_payout REFERENCING OLD TABLE AS old_rows '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_payouts_owner()',
 'CREATE TRIGGER core_counter_payouts_owner_delete AFTER DELETE ON payments_payout REFERENCING OLD TABLE AS old_rows '
 'FOR EACH STATEMENT EXECUTE FUNCTION core_counter_payouts_owner()']

PAYOUTS_POSTGRESQL_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_payouts_owner_insert ON payments_payout',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_update ON payments_payout',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_delete ON payments_payout',
 'DROP FUNCTION IF EXISTS core_counter_payouts_owner()',
 "DELETE FROM core_counter WHERE substr(name, 1, 14) = 'payouts.owner.'"]

PAYOUTS_SQLITE_FORWARD = ["INSERT INTO core_counter (name, shard, value) SELECT 'payouts.owner' || '.' || replace(CAST(payments_payout.owner_id "
 "AS TEXT), '-', ''), 0, count(*) FROM payments_payout WHERE true GROUP BY 1",
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_stay',
 'CREATE TRIGGER core_counter_payouts_owner_insert AFTER INSERT ON payments_payout WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('payouts.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), 0, "
 '1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_payouts_owner_delete AFTER DELETE ON payments_payout WHEN true BEGIN INSERT INTO '
 "core_counter (name, shard, value) VALUES ('payouts.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), 0, "
 '-1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_payouts_owner_in AFTER UPDATE ON payments_payout WHEN (true) AND NOT ((true) AND (true) '
 "AND 'payouts.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'payouts.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('payouts.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_payouts_owner_out AFTER UPDATE ON payments_payout WHEN (true) AND NOT ((true) AND (true) '
 "AND 'payouts.owner' || '.' || replace(CAST(NEW.owner_id AS TEXT), '-', '') = 'payouts.owner' || '.' || "
 "replace(CAST(OLD.owner_id AS TEXT), '-', '')) BEGIN INSERT INTO core_counter (name, shard, value) VALUES "
 "('payouts.owner' || '.' || replace(CAST(OLD.owner_id AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE "
 'SET value = value + excluded.value; END']

PAYOUTS_SQLITE_BACKWARD = ['DROP TRIGGER IF EXISTS core_counter_payouts_owner_insert',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_delete',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_in',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_out',
 'DROP TRIGGER IF EXISTS core_counter_payouts_owner_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 14) = 'payouts.owner.'"]


EARNINGS = {"postgresql": (EARNINGS_POSTGRESQL_FORWARD, EARNINGS_POSTGRESQL_BACKWARD),
            "sqlite": (EARNINGS_SQLITE_FORWARD, EARNINGS_SQLITE_BACKWARD)}
PAYOUTS = {"postgresql": (PAYOUTS_POSTGRESQL_FORWARD, PAYOUTS_POSTGRESQL_BACKWARD),
           "sqlite": (PAYOUTS_SQLITE_FORWARD, PAYOUTS_SQLITE_BACKWARD)}
FORWARD = {  # the function both share, created once
    vendor: EARNINGS[vendor][0] + [statement for statement in PAYOUTS[vendor][0] if statement not in EARNINGS[vendor][0]]
    for vendor in EARNINGS
}
BACKWARD = {vendor: PAYOUTS[vendor][1] + EARNINGS[vendor][1] for vendor in EARNINGS}


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
        ("payments", "0010_localsubscription_collection_paused"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
