"""Payments move to the `payments` app (docs/decisions.md#one-money-app): a payment names what it pays for by a
source string (`task:<uuid>`) and the offer its amount was agreed in (`bid:<uuid>`), and its payer and payee
directly, instead of foreign keys to this app's tables. The rows and their table stay where they are; this
migration gives the table its new columns, fills them and hands the model over to `payments` (its 0009 takes
it into its state, with no change to the database).

The expand step of an expand/contract change (docs/operations.md#migrations-in-a-rolling-deploy): during a
rolling deploy nodes of the release before still write payments with `task_id` and `bid_id` only, and read
those columns. So nothing is dropped yet: `task_id` and `bid_id` stay, nullable, and on PostgreSQL a trigger
keeps both spellings of a row's keys filled, whichever release wrote it. The release after this one drops
the two columns and the trigger. (SQLite is `make run`'s single process: no release runs beside another.)

The SQL is literal here: a migration does not import the app's current code. On SQLite, altering a column
rebuilds the table and drops its delete trigger (installed by 0009) with the old one: it is installed again.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

TABLE = "tasks_market_payment"

PG_KEYS = f"""
CREATE OR REPLACE FUNCTION tasks_market_payment_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.source = '' AND NEW.task_id IS NOT NULL THEN  -- written by the release before the move
        NEW.source := 'task:' || NEW.task_id::text;
        NEW.reference := 'bid:' || NEW.bid_id::text;
        NEW.payer_id := COALESCE(NEW.payer_id, (SELECT poster_id FROM tasks_market_task WHERE id = NEW.task_id));
        NEW.payee_id := COALESCE(NEW.payee_id, (SELECT bidder_id FROM tasks_market_bid WHERE id = NEW.bid_id));
    ELSIF NEW.task_id IS NULL AND NEW.source LIKE 'task:%' THEN  -- written by this release, read by that one
        NEW.task_id := substr(NEW.source, 6)::uuid;
        NEW.bid_id := substr(NEW.reference, 5)::uuid;
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS {TABLE}_keys ON {TABLE};
CREATE TRIGGER {TABLE}_keys BEFORE INSERT OR UPDATE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION tasks_market_payment_keys();
"""


PG_FILL = f"""
UPDATE {TABLE} AS p SET source = 'task:' || p.task_id::text, reference = 'bid:' || p.bid_id::text,
    payer_id = t.poster_id, payee_id = b.bidder_id
FROM tasks_market_task AS t, tasks_market_bid AS b WHERE t.id = p.task_id AND b.id = p.bid_id
"""


def fill(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":  # one statement
        schema_editor.execute(PG_FILL)
        return
    Payment = apps.get_model("tasks_market", "Payment")
    Task = apps.get_model("tasks_market", "Task")
    Bid = apps.get_model("tasks_market", "Bid")
    batch = []
    for payment in Payment.objects.only("pk", "task_id", "bid_id").iterator(chunk_size=1000):
        payment.source, payment.reference = f"task:{payment.task_id}", f"bid:{payment.bid_id}"
        payment.payer_id = Task.objects.filter(pk=payment.task_id).values_list("poster_id", flat=True).get()
        payment.payee_id = Bid.objects.filter(pk=payment.bid_id).values_list("bidder_id", flat=True).get()
        batch.append(payment)
        if len(batch) == 1000:
            Payment.objects.bulk_update(batch, ["source", "reference", "payer", "payee"])
            batch = []
    Payment.objects.bulk_update(batch, ["source", "reference", "payer", "payee"])


def triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_KEYS, params=None)  # literal SQL: its % is LIKE's, not a placeholder
    elif vendor == "sqlite":
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_never_deleted")
        schema_editor.execute(
            f"CREATE TRIGGER {TABLE}_never_deleted BEFORE DELETE ON {TABLE} "
            f"BEGIN SELECT RAISE(ABORT, 'rows of {TABLE} are money records and are never deleted'); END"
        )


def triggers_back(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_keys ON {TABLE}")
        schema_editor.execute("DROP FUNCTION IF EXISTS tasks_market_payment_keys()")


def _user(null: bool = True):
    return models.ForeignKey(
        null=null, on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL
    )


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_market", "0009_payment_fee_terms_and_money_rows_kept"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]
    run_before = [("payments", "0009_payment")]

    operations = [
        # db_default: the release before inserts payments without these columns (the trigger fills them).
        migrations.AddField(
            model_name="payment", name="source", field=models.CharField(db_default="", default="", max_length=80)
        ),
        migrations.AddField(
            model_name="payment", name="reference", field=models.CharField(db_default="", default="", max_length=80)
        ),
        migrations.AddField(model_name="payment", name="payer", field=_user()),
        migrations.AddField(model_name="payment", name="payee", field=_user()),
        migrations.RunPython(fill, migrations.RunPython.noop),
        # This release writes payments without them (the trigger fills them for the release before).
        migrations.AlterField(
            model_name="payment",
            name="task",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tasks_market.task"
            ),
        ),
        migrations.AlterField(
            model_name="payment",
            name="bid",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tasks_market.bid"
            ),
        ),
        migrations.AddIndex(
            model_name="payment",
            index=models.Index(fields=["source", "-created_at"], name="payment_source_created"),
        ),
        migrations.AddIndex(
            model_name="payment",
            index=models.Index(fields=["reference"], name="payment_reference"),
        ),
        migrations.RunPython(triggers, triggers_back),
        # The model leaves this app's state; the table, `task_id`, `bid_id` and their index stay until the
        # release after this one.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="payment", name="tasks_marke_task_id_a887a1_idx"),
                migrations.RemoveField(model_name="payment", name="task"),
                migrations.RemoveField(model_name="payment", name="bid"),
                migrations.DeleteModel(name="Payment"),
            ]
        ),
    ]
