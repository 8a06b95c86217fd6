"""A subscription's deliveries counted per status (`deliveries.subscription.<subscription hex>.<status>`;
core.db.counters; docs/decisions.md#lists), in place of webhooks_app 0005's count of every status, so that the
`total` of `GET /api/v1/webhooks/subscriptions/{subscription_id}/deliveries` is kept with a `status` filter too
(the sum over the statuses without one). The old keys go and the new ones are seeded with the deliveries already
there; on PostgreSQL the table is locked against writes first (until the migration commits), so no delivery
is counted under the old triggers after the seed read it. Going back installs 0005's count again (its SQL
frozen below as well).

Literal here: a migration does not import the app's current code. The SQL is what
`core.db.counters.install_sql` produced with `condition="true"`, `key=("subscription_id", "status")` and
`versions=False` when it was frozen here; replaying this migration installs that, whatever core.db.counters
says later."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations

# Every key of the family: 0005's, one per subscription, made again per status below.
FORGET_OLD_KEYS = "DELETE FROM core_counter WHERE substr(name, 1, 24) = 'deliveries.subscription.'"

POSTGRESQL_INSTALL = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'deliveries.subscription' || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.subscription_id AS TEXT), '-', '') || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.status AS TEXT), '-', ''), 0, count(*) FROM webhooks_app_webhookdelivery "
 'WHERE true GROUP BY 1',
 'CREATE OR REPLACE FUNCTION core_counter_deliveries_subscription() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, 1 AS "
 'delta FROM new_rows r WHERE true) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); '
 'END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, -1 AS "
 'delta FROM old_rows r WHERE true) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); '
 'END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, 1 AS "
 "delta FROM new_rows r WHERE true UNION ALL SELECT 'deliveries.subscription' || '.' || replace(CAST(r.subscription_id "
 "AS TEXT), '-', '') || '.' || replace(CAST(r.status AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) "
 'keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_update ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete ON webhooks_app_webhookdelivery',
 'CREATE TRIGGER core_counter_deliveries_subscription_insert AFTER INSERT ON webhooks_app_webhookdelivery REFERENCING '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_deliveries_subscription()',
 'CREATE TRIGGER core_counter_deliveries_subscription_update AFTER UPDATE ON webhooks_app_webhookdelivery REFERENCING '
 'OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION '
 'core_counter_deliveries_subscription()',
 'CREATE TRIGGER core_counter_deliveries_subscription_delete AFTER DELETE ON webhooks_app_webhookdelivery REFERENCING '
 'OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_deliveries_subscription()']

POSTGRESQL_UNINSTALL = ['DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_update ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete ON webhooks_app_webhookdelivery',
 'DROP FUNCTION IF EXISTS core_counter_deliveries_subscription()',
 "DELETE FROM core_counter WHERE substr(name, 1, 24) = 'deliveries.subscription.'"]

SQLITE_INSTALL = ["INSERT INTO core_counter (name, shard, value) SELECT 'deliveries.subscription' || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.subscription_id AS TEXT), '-', '') || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.status AS TEXT), '-', ''), 0, count(*) FROM webhooks_app_webhookdelivery "
 'WHERE true GROUP BY 1',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_in',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_out',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_stay',
 'CREATE TRIGGER core_counter_deliveries_subscription_insert AFTER INSERT ON webhooks_app_webhookdelivery WHEN true '
 "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(NEW.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(NEW.status AS TEXT), '-', ''), 0, 1) ON "
 'CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_deliveries_subscription_delete AFTER DELETE ON webhooks_app_webhookdelivery WHEN true '
 "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(OLD.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(OLD.status AS TEXT), '-', ''), 0, -1) ON "
 'CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_deliveries_subscription_in AFTER UPDATE ON webhooks_app_webhookdelivery WHEN (true) AND '
 "NOT ((true) AND (true) AND 'deliveries.subscription' || '.' || replace(CAST(NEW.subscription_id AS TEXT), '-', '') "
 "|| '.' || replace(CAST(NEW.status AS TEXT), '-', '') = 'deliveries.subscription' || '.' || "
 "replace(CAST(OLD.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(OLD.status AS TEXT), '-', '')) BEGIN "
 "INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(NEW.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(NEW.status AS TEXT), '-', ''), 0, 1) ON "
 'CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END',
 'CREATE TRIGGER core_counter_deliveries_subscription_out AFTER UPDATE ON webhooks_app_webhookdelivery WHEN (true) AND '
 "NOT ((true) AND (true) AND 'deliveries.subscription' || '.' || replace(CAST(NEW.subscription_id AS TEXT), '-', '') "
 "|| '.' || replace(CAST(NEW.status AS TEXT), '-', '') = 'deliveries.subscription' || '.' || "
 "replace(CAST(OLD.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(OLD.status AS TEXT), '-', '')) BEGIN "
 "INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(OLD.subscription_id AS TEXT), '-', '') || '.' || replace(CAST(OLD.status AS TEXT), '-', ''), 0, -1) ON "
 'CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END']

SQLITE_UNINSTALL = ['DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_in',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_out',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_stay',
 "DELETE FROM core_counter WHERE substr(name, 1, 24) = 'deliveries.subscription.'"]


# webhooks_app 0005's count of every status in one key per subscription, frozen again here: going back installs it.
POSTGRESQL_EVERY_STATUS = ['\n'
 'CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$\n'
 'BEGIN\n'
 '    IF delta <> 0 THEN\n'
 '        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)\n'
 '        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;\n'
 '    END IF;\n'
 'END $$',
 "INSERT INTO core_counter (name, shard, value) SELECT 'deliveries.subscription' || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.subscription_id AS TEXT), '-', ''), 0, count(*) FROM "
 'webhooks_app_webhookdelivery WHERE true GROUP BY 1',
 'CREATE OR REPLACE FUNCTION core_counter_deliveries_subscription() RETURNS trigger LANGUAGE plpgsql AS $$\n'
 '            DECLARE moved record;\n'
 '            BEGIN\n'
 "                IF TG_OP = 'INSERT' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true) keyed GROUP BY k "
 'ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 "                ELSIF TG_OP = 'DELETE' THEN\n"
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') AS k, -1 AS delta FROM old_rows r WHERE true) keyed GROUP BY k "
 'ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                ELSE\n'
 "                    FOR moved IN SELECT k, sum(delta)::bigint AS delta FROM (SELECT 'deliveries.subscription' || '.' "
 "|| replace(CAST(r.subscription_id AS TEXT), '-', '') AS k, 1 AS delta FROM new_rows r WHERE true UNION ALL SELECT "
 "'deliveries.subscription' || '.' || replace(CAST(r.subscription_id AS TEXT), '-', '') AS k, -1 AS delta FROM "
 'old_rows r WHERE true) keyed GROUP BY k ORDER BY k LOOP PERFORM core_counter_add(moved.k, moved.delta); END LOOP;\n'
 '                END IF;\n'
 '                RETURN NULL;\n'
 '            END $$',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_update ON webhooks_app_webhookdelivery',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete ON webhooks_app_webhookdelivery',
 'CREATE TRIGGER core_counter_deliveries_subscription_insert AFTER INSERT ON webhooks_app_webhookdelivery REFERENCING '
 'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_deliveries_subscription()',
 'CREATE TRIGGER core_counter_deliveries_subscription_update AFTER UPDATE ON webhooks_app_webhookdelivery REFERENCING '
 'OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION '
 'core_counter_deliveries_subscription()',
 'CREATE TRIGGER core_counter_deliveries_subscription_delete AFTER DELETE ON webhooks_app_webhookdelivery REFERENCING '
 'OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_deliveries_subscription()']

SQLITE_EVERY_STATUS = ["INSERT INTO core_counter (name, shard, value) SELECT 'deliveries.subscription' || '.' || "
 "replace(CAST(webhooks_app_webhookdelivery.subscription_id AS TEXT), '-', ''), 0, count(*) FROM "
 'webhooks_app_webhookdelivery WHERE true GROUP BY 1',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_insert',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_delete',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_in',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_out',
 'DROP TRIGGER IF EXISTS core_counter_deliveries_subscription_stay',
 'CREATE TRIGGER core_counter_deliveries_subscription_insert AFTER INSERT ON webhooks_app_webhookdelivery WHEN true '
 "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(NEW.subscription_id AS TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + "
 'excluded.value; END',
 'CREATE TRIGGER core_counter_deliveries_subscription_delete AFTER DELETE ON webhooks_app_webhookdelivery WHEN true '
 "BEGIN INSERT INTO core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || "
 "replace(CAST(OLD.subscription_id AS TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + "
 'excluded.value; END',
 'CREATE TRIGGER core_counter_deliveries_subscription_in AFTER UPDATE ON webhooks_app_webhookdelivery WHEN (true) AND '
 "NOT ((true) AND (true) AND 'deliveries.subscription' || '.' || replace(CAST(NEW.subscription_id AS TEXT), '-', '') = "
 "'deliveries.subscription' || '.' || replace(CAST(OLD.subscription_id AS TEXT), '-', '')) BEGIN INSERT INTO "
 "core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || replace(CAST(NEW.subscription_id AS "
 "TEXT), '-', ''), 0, 1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END",
 'CREATE TRIGGER core_counter_deliveries_subscription_out AFTER UPDATE ON webhooks_app_webhookdelivery WHEN (true) AND '
 "NOT ((true) AND (true) AND 'deliveries.subscription' || '.' || replace(CAST(NEW.subscription_id AS TEXT), '-', '') = "
 "'deliveries.subscription' || '.' || replace(CAST(OLD.subscription_id AS TEXT), '-', '')) BEGIN INSERT INTO "
 "core_counter (name, shard, value) VALUES ('deliveries.subscription' || '.' || replace(CAST(OLD.subscription_id AS "
 "TEXT), '-', ''), 0, -1) ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value; END"]

INSTALL = {"postgresql": POSTGRESQL_INSTALL, "sqlite": SQLITE_INSTALL}
UNINSTALL = {"postgresql": POSTGRESQL_UNINSTALL, "sqlite": SQLITE_UNINSTALL}
EVERY_STATUS = {"postgresql": POSTGRESQL_EVERY_STATUS, "sqlite": SQLITE_EVERY_STATUS}
LOCK = {
    "postgresql": ["LOCK TABLE webhooks_app_webhookdelivery IN SHARE ROW EXCLUSIVE MODE"],
    "sqlite": [],  # a migration holds SQLite's one write lock already
}


def _execute(statements, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in INSTALL:  # as core.db.counters.install_sql did: the two supported engines
        raise ImproperlyConfigured(f"kept counts need PostgreSQL or SQLite, not {vendor}")
    for statement in statements(vendor):
        schema_editor.execute(statement, params=None)  # literal SQL: its % is SQL's, not a placeholder


def forwards(apps, schema_editor):
    _execute(lambda vendor: [*LOCK[vendor], FORGET_OLD_KEYS, *INSTALL[vendor]], schema_editor)


def backwards(apps, schema_editor):
    _execute(lambda vendor: [*LOCK[vendor], *UNINSTALL[vendor], *EVERY_STATUS[vendor]], schema_editor)


class Migration(migrations.Migration):
    dependencies = [("webhooks_app", "0005_delivery_counts")]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
