"""Research items count the times their run was queued (`attempts`), so the sweep of lost audits is bounded.
A database default, so the release before keeps inserting."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("brands", "0004_competitorseed_discovered_by")]
    operations = [
        migrations.AddField("researchitem", "attempts", models.PositiveSmallIntegerField(default=0, db_default=0)),
    ]
