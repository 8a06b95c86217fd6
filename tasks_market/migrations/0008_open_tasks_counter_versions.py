"""The open-task count's triggers also raise its shards' versions, under which a process keeps pages of the
open list (core.pagecache; docs/decisions.md#open-list-pages). Literal here: a migration does not import
the app's current code."""

from django.db import migrations

from core.counters import installer

OPEN_TASKS = {"name": "tasks.open", "table": "tasks_market_task", "condition": "{row}.status = 'open'"}


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0009_counter_version"),
        ("tasks_market", "0007_admin_change_list_indexes"),
    ]

    operations = [
        migrations.RunPython(
            installer(**OPEN_TASKS, seed=False), installer(**OPEN_TASKS, versions=False, seed=False)
        ),
    ]
