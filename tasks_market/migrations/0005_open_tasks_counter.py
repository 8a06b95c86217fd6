"""The open-task count, kept by triggers in the same transaction as every write (core.counters;
docs/decisions.md#lists). Literal here: a migration does not import the app's current code."""

from django.db import migrations

from core.counters import installer

OPEN_TASKS = {"name": "tasks.open", "table": "tasks_market_task", "condition": "{row}.status = 'open'"}


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0008_counter"),
        ("tasks_market", "0004_list_order_indexes"),
    ]

    operations = [
        # The count alone, as this migration first installed it; 0008 adds the versions.
        migrations.RunPython(
            installer(**OPEN_TASKS, versions=False), installer(**OPEN_TASKS, versions=False, backwards=True)
        ),
    ]
