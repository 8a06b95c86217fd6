"""The fee terms a payment pinned at selection (docs/decisions.md#the-fee-is-pinned-at-selection); money rows
kept: payments and dispute resolutions are protected from their task's, bid's or poster's delete, and the
database refuses a DELETE of them, on PostgreSQL and on SQLite (`make run`'s embedded default)
(docs/decisions.md#money-rows-are-never-deleted); a delivery can be `cancelled` (a paid task refunded).

The trigger SQL is literal here: a migration does not import the app's current code. A later migration that
rebuilds one of these tables on SQLite (SQLite's way to alter a column) drops its trigger with the old table
and must install it again."""

import django.db.models.deletion
from django.db import migrations, models

TABLES = ("tasks_market_payment", "tasks_market_disputeresolution")

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION tasks_market_never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'rows of % are money records and are never deleted', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END $$"""


def _pg_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION tasks_market_never_deleted()"
    )


def _sqlite_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'rows of {table} are money records and are never deleted'); END"
    )


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    drops = [
        f"DROP TRIGGER IF EXISTS {table}_never_deleted" + (f" ON {table}" if vendor == "postgresql" else "")
        for table in TABLES
    ]
    if vendor == "postgresql":
        statements = [PG_FUNCTION, *drops, *(_pg_trigger(table) for table in TABLES)]
    elif vendor == "sqlite":
        statements = [*drops, *(_sqlite_trigger(table) for table in TABLES)]
    else:  # the two supported engines
        return
    for statement in statements:
        schema_editor.execute(statement, params=None)  # literal SQL: its % is plpgsql's, not a placeholder


def uninstall(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        return
    for table in TABLES:
        schema_editor.execute(
            f"DROP TRIGGER IF EXISTS {table}_never_deleted" + (f" ON {table}" if vendor == "postgresql" else "")
        )
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS tasks_market_never_deleted()")


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_market", "0008_open_tasks_counter_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name="payment",
            name="fee_percent",
            field=models.DecimalField(blank=True, decimal_places=3, max_digits=6, null=True),
        ),
        migrations.AddField(
            model_name="payment",
            name="fee_minimum",
            field=models.DecimalField(blank=True, decimal_places=3, max_digits=12, null=True),
        ),
        migrations.AlterField(
            model_name="payment",
            name="task",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="payments", to="tasks_market.task"
            ),
        ),
        migrations.AlterField(
            model_name="payment",
            name="bid",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="payments", to="tasks_market.bid"
            ),
        ),
        migrations.AlterField(
            model_name="disputeresolution",
            name="task",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="dispute_resolution",
                to="tasks_market.task",
            ),
        ),
        migrations.AlterField(
            model_name="delivery",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("dispatched", "Dispatched"),
                    ("submitted", "Submitted"),
                    ("approved", "Approved"),
                    ("disputed", "Disputed"),
                    ("revision_requested", "Revision requested"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                ],
                default="pending",
                max_length=20,
            ),
        ),
        migrations.RunPython(install, uninstall),
    ]
