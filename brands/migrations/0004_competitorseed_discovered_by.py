"""Competitor seeds say how they were found (`discovered_by`). Seeds stored before discovery existed came from
the admin or the demo seed: they read `admin` (a database default, so the release before keeps inserting)."""

from django.db import migrations, models

SEED_ORIGINS = [("dataforseo", "Dataforseo"), ("local_crawl", "Local Crawl"), ("demo", "Demo"), ("admin", "Admin")]


class Migration(migrations.Migration):
    dependencies = [("brands", "0003_publication_schedule_and_phases")]
    operations = [
        migrations.AddField(
            "competitorseed",
            "discovered_by",
            models.CharField(choices=SEED_ORIGINS, default="admin", db_default="admin", max_length=20),
        ),
    ]
