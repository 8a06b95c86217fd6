# The local provider's models, moved here from `core` (core 0006 drops them from its state). State
# only: the tables core_localpayment, core_localsubscription and core_localcheckoutsession, made by
# core's migrations 0002-0005, are kept with their rows (Meta.db_table). Their content types are
# renamed too, so permissions granted on them follow the models.

import django.db.models.deletion
from django.db import migrations, models

MODELS = ('localpayment', 'localsubscription', 'localcheckoutsession')


def _move_content_types(apps, schema_editor, old, new):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    db = schema_editor.connection.alias
    for model in MODELS:
        if not ContentType.objects.using(db).filter(app_label=new, model=model).exists():
            ContentType.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, 'core', 'payments')


def backwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, 'payments', 'core')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('core', '0006_local_provider_models_to_payments'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='LocalPayment',
                    fields=[
                        ('id', models.CharField(editable=False, max_length=40, primary_key=True, serialize=False)),
                        ('idempotency_key', models.CharField(blank=True, editable=False, max_length=255, null=True, unique=True)),
                        ('amount_minor', models.BigIntegerField(help_text="In the currency's minor unit (cents).")),
                        ('currency', models.CharField(max_length=3)),
                        ('status', models.CharField(choices=[('requires_payment', 'Requires payment'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled'), ('released', 'Released'), ('refunded', 'Refunded')], default='requires_payment', max_length=20)),
                        ('client_secret', models.CharField(max_length=100)),
                        ('description', models.CharField(blank=True, max_length=500)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'core_localpayment',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='LocalSubscription',
                    fields=[
                        ('id', models.CharField(editable=False, max_length=40, primary_key=True, serialize=False)),
                        ('idempotency_key', models.CharField(blank=True, editable=False, max_length=255, null=True, unique=True)),
                        ('customer_email', models.EmailField(max_length=254)),
                        ('plan', models.CharField(max_length=100)),
                        ('status', models.CharField(default='active', max_length=20)),
                        ('cancel_at_period_end', models.BooleanField(default=False)),
                        ('current_period_start', models.DateTimeField()),
                        ('current_period_end', models.DateTimeField()),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'core_localsubscription',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='LocalCheckoutSession',
                    fields=[
                        ('id', models.CharField(editable=False, max_length=64, primary_key=True, serialize=False)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('completed', 'Completed')], default='open', max_length=20)),
                        ('outcome', models.CharField(blank=True, help_text='What the payer chose: paid, declined, card_declined.', max_length=20)),
                        ('payee', models.CharField(blank=True, help_text='Who receives the money, as the page shows it.', max_length=200)),
                        ('success_url', models.URLField(blank=True, max_length=2000)),
                        ('cancel_url', models.URLField(blank=True, max_length=2000)),
                        ('expires_at', models.DateTimeField()),
                        ('completed_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('payment', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='checkout_session', to='payments.localpayment')),
                        ('subscription', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='checkout_sessions', to='payments.localsubscription')),
                    ],
                    options={
                        'db_table': 'core_localcheckoutsession',
                        'ordering': ['-created_at'],
                        'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('payment__isnull', False), ('subscription__isnull', True)), models.Q(('payment__isnull', True), ('subscription__isnull', False)), _connector='OR'), name='checkout_session_has_one_object')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
