"""A payload is published once per brand: a partial unique index over (brand, payload_hash) of the confirmed
publications (queued, processing, succeeded). The confirm of the release before already answered a twin with
the first one (under the brand's row lock), so no running code inserts what the index refuses.

On PostgreSQL the index is built CONCURRENTLY (no table lock during a rolling deploy), hence a
non-atomic migration; other databases (SQLite for `make run`) build it plainly."""

from django.db import migrations, models

NAME = "publication_once_per_payload"
WHERE = "status IN ('queued', 'processing', 'succeeded')"


def create_index(apps, schema_editor):
    concurrently = "CONCURRENTLY " if schema_editor.connection.vendor == "postgresql" else ""
    schema_editor.execute(
        f"CREATE UNIQUE INDEX {concurrently}IF NOT EXISTS {NAME} "
        f"ON brands_publication (brand_id, payload_hash) WHERE {WHERE}"
    )


def drop_index(apps, schema_editor):
    concurrently = "CONCURRENTLY " if schema_editor.connection.vendor == "postgresql" else ""
    schema_editor.execute(f"DROP INDEX {concurrently}IF EXISTS {NAME}")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("brands", "0006_connected_accounts")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="publication",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("status__in", ["queued", "processing", "succeeded"])),
                        fields=("brand", "payload_hash"),
                        name=NAME,
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(create_index, drop_index, elidable=False)],
        ),
    ]
