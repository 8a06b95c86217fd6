"""A publication phase `awaiting_approval` (supervised teams): choices only, no change to the column."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("brands", "0007_publication_once_per_payload"),
    ]

    operations = [
        migrations.AlterField(
            model_name="publication",
            name="phase",
            field=models.CharField(
                choices=[
                    ("awaiting_confirmation", "Preflight: waiting for confirmation"),
                    ("waiting_for_worker", "Queued: waiting for the publisher"),
                    ("scheduled", "Queued: waiting for its scheduled time"),
                    ("awaiting_approval", "Queued: waiting for the brand owner's approval (supervised team)"),
                    ("validating", "Processing: validating the payload"),
                    ("publishing", "Processing: handing it to the platform"),
                    ("published", "Succeeded: live on the platform"),
                    ("simulated", "Succeeded: simulated by the local provider, posted nowhere"),
                    ("rejected", "Failed: the platform refused it"),
                    ("action_required", "Needs attention: fix the creative, then publish again"),
                    ("cancelled_by_user", "Cancelled by its owner"),
                    ("expired", "Cancelled: expires_at passed (not confirmed, or not published in time)"),
                ],
                default="awaiting_confirmation",
                max_length=30,
            ),
        ),
    ]
