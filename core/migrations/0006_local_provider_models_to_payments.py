# The local provider's models moved to the `payments` app. State only: their tables (core_local*) and
# rows stay where they are; payments/migrations/0001_initial.py takes them over in its state.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0005_local_provider_idempotency_keys'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='LocalCheckoutSession'),
                migrations.DeleteModel(name='LocalPayment'),
                migrations.DeleteModel(name='LocalSubscription'),
            ],
            database_operations=[],
        ),
    ]
