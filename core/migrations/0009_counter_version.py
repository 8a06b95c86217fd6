from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0008_counter"),
    ]

    operations = [
        migrations.AddField(
            model_name="counter",
            name="version",
            field=models.BigIntegerField(db_default=0, default=0),
        ),
    ]
