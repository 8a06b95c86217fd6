"""A seller's earnings and payouts lists read their page through an index on their whole order
(`created_at DESC, id DESC`, docs/decisions.md#lists): the index on (owner, -created_at) left the tie-break
on id to a sort. The new index is built before the old one is dropped, so a node still serving reads
through one of them throughout."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('payments', '0011_earning_payout_counts'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='earning',
            index=models.Index(fields=['owner', '-created_at', '-id'], name='payments_ea_owner_i_08b2a4_idx'),
        ),
        migrations.AddIndex(
            model_name='payout',
            index=models.Index(fields=['owner', '-created_at', '-id'], name='payments_pa_owner_i_67aa9f_idx'),
        ),
        migrations.RemoveIndex(
            model_name='earning',
            name='payments_ea_owner_i_74ee71_idx',
        ),
        migrations.RemoveIndex(
            model_name='payout',
            name='payments_pa_owner_i_bd8cdb_idx',
        ),
    ]
