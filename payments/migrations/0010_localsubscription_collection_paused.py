"""The local provider records a paused collection, as Stripe's pause_collection (a paused team is not billed)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("payments", "0009_payment")]

    operations = [
        migrations.AddField(
            model_name="localsubscription",
            name="collection_paused",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
