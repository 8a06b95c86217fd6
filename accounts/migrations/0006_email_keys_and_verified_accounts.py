"""Every existing account gets its address key, and counts as verified.

The key (accounts.addresses.normalise_email): the local part NFKC + casefold, the domain as IDNA 2008
A-labels. Addresses stored so far are already NFKC + casefolded (migration 0002), so only the domain
changes form. Two accounts whose addresses now have one key (a domain spelled with a character UTS #46
drops, say) are not merged: the older keeps the key, the other is left without one and printed, for an
operator to settle, as 0002 did.

Verified: these accounts were made before addresses were verified, by a registration the rules of the
day accepted, and they may hold API keys, payout accounts and credits already; taking those away until a
mail comes back would break working integrations for no gain, since a squatted address is still taken
back by a password reset, which the mail reaches only at its owner
(docs/decisions.md#identity-and-authentication). Their sign-up credits were granted at registration.
"""

import unicodedata

import idna
from django.db import migrations
from django.utils import timezone


def _casefold(text: str) -> str:  # copies: a migration must not change when the model module does
    return unicodedata.normalize("NFKC", text).casefold()


def _key(email: str) -> str:
    email = (email or "").strip()
    local, at, domain = email.rpartition("@")
    if not at:
        return _casefold(email)
    try:
        domain_key = idna.encode(domain.removesuffix("."), uts46=True).decode("ascii")
    except UnicodeError:
        domain_key = _casefold(domain)
    return f"{_casefold(local)}@{domain_key}"


def backfill(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    now = timezone.now()
    taken = set(User.objects.exclude(email_key=None).values_list("email_key", flat=True))
    for user in User.objects.filter(email_key=None).order_by("date_joined", "id").only("id", "email"):
        key = _key(user.email)
        if key in taken:
            print(f"\n  accounts: {user.id} ({user.email!r}) has no key: {key!r} is another account's")
            continue
        taken.add(key)
        User.objects.filter(pk=user.pk).update(email_key=key)
    User.objects.filter(email_verified_at=None).update(email_verified_at=now)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0005_user_email_key_and_verification")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
