"""Credits move to this app (docs/decisions.md#credits-belong-to-the-assistant): a user's balance is a row of
`assistant_creditbalance` instead of the column `accounts_user.credits`. The rows are copied here (an account
without one has 0); accounts' 0007 takes the column out of its model.

The expand step of an expand/contract change (docs/operations.md#migrations-in-a-rolling-deploy): during a
rolling deploy nodes of the release before still read and write `accounts_user.credits`. So the column stays
until the release after this one, and on PostgreSQL two triggers keep both spellings of a balance equal,
whichever release wrote it: each copies a change to the other table only when it differs there, so the
pair stops after one round. (SQLite is `make run`'s single process: no release runs beside another.)

The SQL is literal here: a migration does not import the app's current code.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

COPY = "INSERT INTO assistant_creditbalance (user_id, credits) SELECT id, credits FROM accounts_user WHERE credits > 0"

PG_SYNC = """
CREATE OR REPLACE FUNCTION assistant_credits_from_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The release before wrote accounts_user.credits: this release reads the balance row.
    IF (TG_OP = 'INSERT' AND NEW.credits > 0) OR (TG_OP = 'UPDATE' AND NEW.credits IS DISTINCT FROM OLD.credits) THEN
        INSERT INTO assistant_creditbalance (user_id, credits) VALUES (NEW.id, NEW.credits)
        ON CONFLICT (user_id) DO UPDATE SET credits = EXCLUDED.credits
        WHERE assistant_creditbalance.credits IS DISTINCT FROM EXCLUDED.credits;
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS accounts_user_credits_sync ON accounts_user;
CREATE TRIGGER accounts_user_credits_sync AFTER INSERT OR UPDATE OF credits ON accounts_user
    FOR EACH ROW EXECUTE FUNCTION assistant_credits_from_user();

CREATE OR REPLACE FUNCTION assistant_credits_to_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- This release wrote the balance row: the release before reads accounts_user.credits.
    UPDATE accounts_user SET credits = NEW.credits WHERE id = NEW.user_id AND credits IS DISTINCT FROM NEW.credits;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS assistant_creditbalance_sync ON assistant_creditbalance;
CREATE TRIGGER assistant_creditbalance_sync AFTER INSERT OR UPDATE OF credits ON assistant_creditbalance
    FOR EACH ROW EXECUTE FUNCTION assistant_credits_to_user();
"""

PG_SYNC_BACK = """
DROP TRIGGER IF EXISTS accounts_user_credits_sync ON accounts_user;
DROP TRIGGER IF EXISTS assistant_creditbalance_sync ON assistant_creditbalance;
DROP FUNCTION IF EXISTS assistant_credits_from_user();
DROP FUNCTION IF EXISTS assistant_credits_to_user();
"""


def sync(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PG_SYNC, params=None)


def sync_back(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PG_SYNC_BACK, params=None)


# The balance's key is its user: one row per account, gone with it.
BALANCE_USER = models.OneToOneField(
    on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="credit_balance", serialize=False,
    to=settings.AUTH_USER_MODEL,
)  # fmt: skip


class Migration(migrations.Migration):
    # accounts' last migration, which is the user model's (AUTH_USER_MODEL) too.
    dependencies = [("assistant", "0003_list_order_indexes"), ("accounts", "0006_email_keys_and_verified_accounts")]

    operations = [
        migrations.CreateModel(
            name="CreditBalance", fields=[("user", BALANCE_USER), ("credits", models.PositiveIntegerField(default=0))]
        ),
        migrations.RunSQL(COPY, migrations.RunSQL.noop),
        migrations.RunPython(sync, sync_back),
    ]
