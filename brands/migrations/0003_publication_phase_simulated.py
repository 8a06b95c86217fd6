"""A publication's phase `simulated`: the local publisher's success, posted nowhere (choices only)."""

from django.db import migrations, models

PHASES = [
    ("awaiting_confirmation", "Preflight: waiting for confirmation"),
    ("waiting_for_worker", "Queued: waiting for the publisher"),
    ("validating", "Processing: validating the payload"),
    ("publishing", "Processing: handing it to the platform"),
    ("published", "Succeeded: live on the platform"),
    ("simulated", "Succeeded: simulated by the local provider, posted nowhere"),
    ("rejected", "Failed: the platform refused it"),
    ("action_required", "Needs attention: fix the creative, then publish again"),
    ("cancelled_by_user", "Cancelled by its owner"),
    ("expired", "Cancelled: not confirmed before expires_at"),
]


class Migration(migrations.Migration):
    dependencies = [("brands", "0002_trackedgroupmember_display_name")]
    operations = [
        migrations.AlterField(
            "publication",
            "phase",
            models.CharField(choices=PHASES, default="awaiting_confirmation", max_length=30),
        )
    ]
