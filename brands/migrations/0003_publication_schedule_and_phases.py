"""Publications: `scheduled_at` (nullable: the release before writes rows without it), and the phases
`simulated` (the local publisher's success, posted nowhere) and `scheduled`, with `expired` reworded
(choices only)."""

from django.db import migrations, models

PHASES = [
    ("awaiting_confirmation", "Preflight: waiting for confirmation"),
    ("waiting_for_worker", "Queued: waiting for the publisher"),
    ("scheduled", "Queued: waiting for its scheduled time"),
    ("validating", "Processing: validating the payload"),
    ("publishing", "Processing: handing it to the platform"),
    ("published", "Succeeded: live on the platform"),
    ("simulated", "Succeeded: simulated by the local provider, posted nowhere"),
    ("rejected", "Failed: the platform refused it"),
    ("action_required", "Needs attention: fix the creative, then publish again"),
    ("cancelled_by_user", "Cancelled by its owner"),
    ("expired", "Cancelled: expires_at passed (not confirmed, or not published in time)"),
]


class Migration(migrations.Migration):
    dependencies = [("brands", "0002_trackedgroupmember_display_name")]
    operations = [
        migrations.AddField("publication", "scheduled_at", models.DateTimeField(blank=True, null=True)),
        migrations.AlterField(
            "publication", "phase", models.CharField(choices=PHASES, default="awaiting_confirmation", max_length=30)
        ),
    ]
