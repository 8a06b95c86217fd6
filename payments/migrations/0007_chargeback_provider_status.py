"""A chargeback keeps the provider's own status (docs/payouts.md#chargebacks): an inquiry
(`warning_*`) and its escalation, and which not-lost close it was (`won`, `warning_closed`, `prevented`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    # After both: 0005 (payouts' transfers) and 0007 (the local provider's balance transactions) start from
    # 0004, so this one also joins them (one leaf).
    dependencies = [("payments", "0006_local_balance_transaction")]

    operations = [
        migrations.AddField(
            model_name="chargeback",
            name="provider_status",
            field=models.CharField(
                blank=True,
                db_default="",
                help_text=(
                    "The provider's last status (Stripe: warning_needs_response, needs_response, won, prevented ...)."
                ),
                max_length=40,
            ),
        ),
        migrations.AlterField(
            model_name="chargeback",
            name="status",
            field=models.CharField(
                choices=[
                    ("open", "Open"),
                    ("won", "Won (not lost: won, warning_closed or prevented)"),
                    ("lost", "Lost"),
                ],
                default="open",
                max_length=20,
            ),
        ),
    ]
