from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_user_password_reset")]

    # Nullable or with a database default: the release before, still serving during a rolling deploy,
    # inserts users without these columns (docs/operations.md#migrations-in-a-rolling-deploy).
    operations = [
        migrations.AddField(
            model_name="user",
            name="email_key",
            field=models.CharField(editable=False, max_length=1000, null=True, unique=True),
        ),
        migrations.AddField(
            model_name="user",
            name="email_verified_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="user",
            name="signup_grant_pending",
            field=models.BooleanField(db_default=False, default=False, editable=False),
        ),
    ]
