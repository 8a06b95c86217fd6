"""The local provider's balance transactions (payments.models.LocalBalanceTransaction), and the ones its
existing objects would have written: captured payments, refunds, transfers, reversals and paid payouts,
so a database made before keeps balances that are what moved."""

import secrets
import string

from django.db import migrations, models

_ALPHABET = string.ascii_letters + string.digits
_CAPTURED = ("succeeded", "released", "refunded")


def _txn(model, *, account, type, amount, currency, source, group="", created_at=None):
    return model(
        id="txn_" + "".join(secrets.choice(_ALPHABET) for _ in range(24)),
        account=account,
        type=type,
        amount_minor=amount,
        fee_minor=0,
        net_minor=amount,
        currency=currency,
        source=source,
        group=group,
    )


def backfill(apps, schema_editor):
    LocalBalanceTransaction = apps.get_model("payments", "LocalBalanceTransaction")
    LocalPayment = apps.get_model("payments", "LocalPayment")
    Connect = apps.get_model("payments", "LocalConnectObject")
    rows = []
    for payment in LocalPayment.objects.filter(status__in=_CAPTURED).iterator():
        task_id = (payment.metadata or {}).get("task_id")
        group = f"task:{task_id}" if task_id else ""
        rows.append(
            _txn(
                LocalBalanceTransaction,
                account="",
                type="charge",
                amount=payment.amount_minor,
                currency=payment.currency,
                source=payment.id,
                group=group,
            )
        )
        if payment.status == "refunded" and payment.amount_refunded_minor < payment.amount_minor:
            rest = payment.amount_minor - payment.amount_refunded_minor
            rows.append(
                _txn(
                    LocalBalanceTransaction,
                    account="",
                    type="refund",
                    amount=-rest,
                    currency=payment.currency,
                    source=payment.id,
                    group=group,
                )
            )
    for obj in Connect.objects.filter(kind__in=("refund", "transfer", "reversal", "payout")).iterator():
        if obj.kind == "refund" and obj.status == "succeeded":
            rows.append(
                _txn(LocalBalanceTransaction, account="", type="refund", amount=-obj.amount_minor, currency=obj.currency, source=obj.id)
            )
        elif obj.kind == "transfer":
            rows.append(
                _txn(LocalBalanceTransaction, account="", type="transfer", amount=-obj.amount_minor, currency=obj.currency, source=obj.id)
            )
            rows.append(
                _txn(
                    LocalBalanceTransaction,
                    account=obj.account_id,
                    type="transfer",
                    amount=obj.amount_minor,
                    currency=obj.currency,
                    source=obj.id,
                )
            )
        elif obj.kind == "reversal" and obj.status == "succeeded":
            transfer = Connect.objects.filter(id=obj.target_id).first()
            if transfer is not None:
                rows.append(
                    _txn(
                        LocalBalanceTransaction,
                        account="",
                        type="transfer_reversal",
                        amount=obj.amount_minor,
                        currency=obj.currency,
                        source=obj.id,
                    )
                )
                rows.append(
                    _txn(
                        LocalBalanceTransaction,
                        account=transfer.account_id,
                        type="transfer_reversal",
                        amount=-obj.amount_minor,
                        currency=obj.currency,
                        source=obj.id,
                    )
                )
        elif obj.kind == "payout" and obj.status == "paid":
            rows.append(
                _txn(
                    LocalBalanceTransaction,
                    account=obj.account_id,
                    type="payout",
                    amount=-obj.amount_minor,
                    currency=obj.currency,
                    source=obj.id,
                )
            )
        if len(rows) >= 1000:
            LocalBalanceTransaction.objects.bulk_create(rows)
            rows = []
    LocalBalanceTransaction.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [("payments", "0005_payouts_transfer_money")]

    operations = [
        migrations.CreateModel(
            name="LocalBalanceTransaction",
            fields=[
                ("id", models.CharField(editable=False, max_length=64, primary_key=True, serialize=False)),
                ("account", models.CharField(blank=True, help_text='"" = the platform, else acct_...', max_length=64)),
                ("type", models.CharField(max_length=30)),
                ("amount_minor", models.BigIntegerField(help_text="Gross, signed: + into the balance, - out of it.")),
                ("fee_minor", models.BigIntegerField(default=0, help_text="What the provider kept (a dispute fee).")),
                ("net_minor", models.BigIntegerField(help_text="amount - fee: what the balance moved.")),
                ("currency", models.CharField(max_length=3)),
                (
                    "source",
                    models.CharField(db_index=True, help_text="pi_, re_, tr_, trr_, po_, dp_ ...", max_length=64),
                ),
                (
                    "group",
                    models.CharField(
                        blank=True, help_text="The payment's transfer group (task:<uuid>).", max_length=80
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["created_at", "id"],
                "indexes": [models.Index(fields=["account", "created_at"], name="payments_lo_account_116c73_idx")],
            },
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
