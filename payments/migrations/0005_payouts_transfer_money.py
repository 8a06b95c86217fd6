"""Payouts make the transfer (docs/payouts.md#payouts): a payout records its transfer; payout accounts keep
their country; money taken back from a connected account is a `TransferReversal`. The money group is
given what the earlier flow moved without posting it: each earning's own transfer (and its reversal by a
refund after release), and each paid payout, so a connected account's balance in the ledger is what the
provider holds and the next payout transfers only what is not there yet."""

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

_KEYS = ("transfer:earning:", "reversal:earning:", "payout-paid:")


def _post(LedgerEntry, LedgerLine, *, kind, source, key, currency, lines, provider_ref):
    entry, created = LedgerEntry.objects.get_or_create(
        key=key, defaults={"kind": kind, "source": source, "provider_ref": provider_ref}
    )
    if not created:
        return []
    return [
        LedgerLine(
            entry=entry,
            account=account,
            owner_id=account.split(":")[1] if account.startswith("seller:") else "",
            source=source,
            currency=currency,
            amount=amount,
        )
        for account, amount in lines
    ]


def backfill(apps, schema_editor):
    Earning = apps.get_model("payments", "Earning")
    Payout = apps.get_model("payments", "Payout")
    LedgerEntry = apps.get_model("payments", "LedgerEntry")
    LedgerLine = apps.get_model("payments", "LedgerLine")
    lines = []
    for earning in Earning.objects.exclude(transfer_id="").iterator():
        connected = f"seller:{earning.owner_id}:connected"
        lines += _post(
            LedgerEntry,
            LedgerLine,
            kind="transfer",
            source=earning.source,
            key=f"transfer:earning:{earning.pk}",
            currency=earning.currency,
            lines=[(connected, earning.amount), ("platform:cash", -earning.amount)],
            provider_ref=earning.transfer_id,
        )
        if earning.status == "reversed" and earning.reversed_amount:  # a refund after release reversed it
            lines += _post(
                LedgerEntry,
                LedgerLine,
                kind="transfer_reversed",
                source=earning.source,
                key=f"reversal:earning:{earning.pk}",
                currency=earning.currency,
                lines=[("platform:cash", earning.reversed_amount), (connected, -earning.reversed_amount)],
                provider_ref=earning.transfer_id,
            )
        if len(lines) > 1000:
            LedgerLine.objects.bulk_create(lines)
            lines = []
    for payout in Payout.objects.filter(status="paid").iterator():
        lines += _post(
            LedgerEntry,
            LedgerLine,
            kind="payout_paid",
            source=f"payout:{payout.pk}",
            key=f"payout-paid:{payout.pk}",
            currency=payout.currency,
            lines=[("outside", payout.amount), (f"seller:{payout.owner_id}:connected", -payout.amount)],
            provider_ref=payout.provider_payout_id,
        )
        if len(lines) > 1000:
            LedgerLine.objects.bulk_create(lines)
            lines = []
    LedgerLine.objects.bulk_create(lines)


def unfill(apps, schema_editor):
    LedgerEntry = apps.get_model("payments", "LedgerEntry")
    LedgerLine = apps.get_model("payments", "LedgerLine")
    for prefix in _KEYS:
        LedgerLine.objects.filter(entry__key__startswith=prefix).delete()
        LedgerEntry.objects.filter(key__startswith=prefix).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("payments", "0004_ledger_money_group"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="payoutaccount",
            name="country",
            field=models.CharField(
                db_default="US",
                default="US",
                help_text="ISO 3166-1 alpha-2: where the account is (its bank, its currency).",
                max_length=2,
            ),
        ),
        migrations.AlterField(
            model_name="payout",
            name="status",
            field=models.CharField(
                choices=[("pending", "Pending"), ("paid", "Paid"), ("failed", "Failed"), ("canceled", "Canceled")],
                default="pending",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="payout",
            name="transfer_amount",
            field=models.DecimalField(db_default=0, decimal_places=3, default=0, max_digits=14),
        ),
        migrations.AddField(
            model_name="payout",
            name="transfer_id",
            field=models.CharField(blank=True, db_default="", db_index=True, max_length=64),
        ),
        migrations.CreateModel(
            name="TransferReversal",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("currency", models.CharField(max_length=3)),
                ("amount", models.DecimalField(decimal_places=3, max_digits=14)),
                (
                    "transfer_id",
                    models.CharField(db_index=True, help_text="The transfer reversed (tr_...).", max_length=64),
                ),
                (
                    "key",
                    models.CharField(help_text="The idempotency key (recovery:<debt>).", max_length=255, unique=True),
                ),
                (
                    "origin",
                    models.CharField(
                        choices=[
                            ("recovery", "Recovery of a debt"),
                            ("elsewhere", "Made elsewhere (the provider's dashboard)"),
                        ],
                        default="recovery",
                        max_length=20,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[("pending", "Pending"), ("done", "Done"), ("failed", "Failed")],
                        default="pending",
                        max_length=20,
                    ),
                ),
                ("failure_reason", models.CharField(blank=True, max_length=500)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={"ordering": ["-created_at"]},
        ),
        migrations.RunPython(backfill, unfill),
    ]
