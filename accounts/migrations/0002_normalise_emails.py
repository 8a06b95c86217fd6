"""Existing e-mails to their one spelling (accounts.models.normalise_email: NFKC + casefold).

An address whose normal form another account already has is left as it is and reported: merging two
accounts is a person's decision, not a migration's (see docs/operations.md#login-throttling).
"""

import unicodedata

from django.db import migrations


def _normal(email: str) -> str:  # a copy: a migration must not change when the model module does
    return unicodedata.normalize("NFKC", (email or "").strip()).casefold()


def normalise(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    # Compared lower-cased, as the unique constraint on Lower("email") compares them.
    taken = {email.lower() for email in User.objects.values_list("email", flat=True)}
    for user in User.objects.order_by("date_joined", "id").only("id", "email"):
        normal = _normal(user.email)
        if normal == user.email:
            continue
        if normal.lower() != user.email.lower() and normal.lower() in taken:
            print(f"\n  accounts: {user.id} keeps {user.email!r}: {normal!r} belongs to another account")
            continue
        taken.discard(user.email.lower())
        taken.add(normal.lower())
        User.objects.filter(pk=user.pk).update(email=normal)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(normalise, migrations.RunPython.noop)]
