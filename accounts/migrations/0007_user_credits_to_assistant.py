"""`User.credits` leaves this app's model: the balance is `assistant`'s now (its 0004 copied every balance;
docs/decisions.md#credits-belong-to-the-assistant).

The expand step (docs/operations.md#migrations-in-a-rolling-deploy): the column stays while the release
before may run, and gets a database default so this release can insert users without it; assistant's
triggers keep it equal to the balance on PostgreSQL. The release after this one drops it.
"""

from django.db import migrations, models


# This release inserts users without the column: the database fills it in.
DEFAULTED = migrations.AlterField("user", "credits", models.PositiveIntegerField(default=0, db_default=0))


class Migration(migrations.Migration):
    dependencies = [("accounts", "0006_email_keys_and_verified_accounts"), ("assistant", "0004_credit_balance")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[DEFAULTED], state_operations=[migrations.RemoveField("user", "credits")]
        )
    ]
