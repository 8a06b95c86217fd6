"""Money rows are never deleted (docs/decisions.md#money-rows-are-never-deleted): the database refuses a
DELETE of a seller's payout account, earning, payout, chargeback or ledger row, on PostgreSQL and on SQLite
(`make run`'s embedded default). The SQL is literal here: a migration does not import the app's current
code. A later migration that rebuilds one of these tables on SQLite (SQLite's way to alter a column) drops
its trigger with the old table and must install it again."""

from django.db import migrations

TABLES = (
    "payments_payoutaccount",
    "payments_earning",
    "payments_payout",
    "payments_chargeback",
    "payments_ledgerentry",
    "payments_ledgerline",
)
PG_FUNCTION = """
CREATE OR REPLACE FUNCTION payments_never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'rows of % are money records and are never deleted', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END $$"""


def _drop(table: str, vendor: str) -> str:
    return f"DROP TRIGGER IF EXISTS {table}_never_deleted" + (f" ON {table}" if vendor == "postgresql" else "")


def _create(table: str, vendor: str) -> str:
    if vendor == "postgresql":
        return (
            f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION payments_never_deleted()"
        )
    return (
        f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'rows of {table} are money records and are never deleted'); END"
    )


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):  # the two supported engines
        return
    statements = [PG_FUNCTION] if vendor == "postgresql" else []
    statements += [_drop(table, vendor) for table in TABLES] + [_create(table, vendor) for table in TABLES]
    for statement in statements:
        schema_editor.execute(statement, params=None)  # literal SQL: its % is plpgsql's, not a placeholder


def uninstall(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        return
    for table in TABLES:
        schema_editor.execute(_drop(table, vendor))
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS payments_never_deleted()")


class Migration(migrations.Migration):
    dependencies = [("payments", "0007_chargeback_provider_status")]

    operations = [migrations.RunPython(install, uninstall)]
