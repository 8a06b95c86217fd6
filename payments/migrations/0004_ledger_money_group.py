"""The ledger's two groups (docs/payouts.md#the-ledger): the claims account that recorded captures was
named `platform:cash`; that name now means the platform's balance at the provider (the money group).
Existing captures are renamed to `platform:captured` and given their money lines (a capture moved the
poster's money into the platform's balance), so the books are as if posted under the new rules."""

from django.db import migrations, models


def split_cash(apps, schema_editor):
    LedgerLine = apps.get_model("payments", "LedgerLine")
    LedgerLine.objects.filter(account="platform:cash").update(account="platform:captured")
    added = []
    for line in LedgerLine.objects.filter(entry__kind__in=("captured", "refunded")).exclude(account__in=("platform:cash", "outside")).iterator():
        if line.account == "platform:captured":
            pairs = (("platform:cash", line.amount), ("outside", -line.amount))
        elif line.account == "poster:refunds":
            pairs = (("outside", -line.amount), ("platform:cash", line.amount))
        else:
            continue
        for account, amount in pairs:
            added.append(LedgerLine(entry_id=line.entry_id, account=account, owner_id="", source=line.source, currency=line.currency, amount=amount))
    LedgerLine.objects.bulk_create(added, batch_size=1000)


def join_cash(apps, schema_editor):
    LedgerLine = apps.get_model("payments", "LedgerLine")
    LedgerLine.objects.filter(account__in=("platform:cash", "outside")).delete()
    LedgerLine.objects.filter(account="platform:captured").update(account="platform:cash")


class Migration(migrations.Migration):
    dependencies = [("payments", "0003_chargeback")]

    operations = [
        migrations.AddField(
            model_name="ledgerentry",
            name="provider_ref",
            field=models.CharField(
                blank=True,
                db_default="",
                db_index=True,
                help_text="The provider's object this movement is (tr_, po_, re_ ...).",
                max_length=255,
            ),
        ),
        migrations.RunPython(split_cash, join_cash),
    ]
