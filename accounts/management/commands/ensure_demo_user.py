import secrets

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiKey, User
from accounts.registry import credits_keeper
from accounts.services import api_key_create

DEMO_EMAIL = "demo@example.com"
DEMO_KEY_NAME = "make run"
DEMO_CREDITS = 100  # a first balance to try image generation with, granted when the user is made
DEMO_STAFF_GROUP = "Demo staff"

VIEW = ("view",)
ALL = ("view", "add", "change", "delete")
# The demo user is staff, not a superuser: its rights are the named permissions of the "Demo staff" group,
# per app of the project (every model in it) or per model ("app_label.model", which overrides its app).
# Nothing of django.contrib.auth, and users only to look at: changing a user or a group would let it raise
# its own rights (tick `is_superuser`). Nothing of simplejwt's token_blacklist: its rows are every session's
# refresh token. An app of the project whose models are in the admin but not here is a page the demo user
# gets 403 on (tests/accounts/test_demo_staff.py opens every change list).
DEMO_STAFF_GRANTS: dict[str, tuple[str, ...]] = {
    "core": ALL,  # rate-limit overrides
    "accounts": ALL,  # API keys (revoke)
    "accounts.user": VIEW,
    "brands": ALL,
    "tasks_market": ALL,  # deliveries (resolve a dispute), dispute resolutions (finish)
    "teams": ALL,  # unsubscribe, reactivate
    "assistant": ALL,  # credit adjustments
    "webhooks_app": ALL,  # re-process an inbound event, replay a delivery
    "scrapers": ALL,  # refresh a snapshot
    "payments": VIEW,  # earnings, payouts, chargebacks, the ledger: read-only, money moves by the actions above
    "payments.payment": ("view", "change"),  # payments: "change" is the Refund action's permission
}


def _granted(permission: Permission) -> bool:
    content_type = permission.content_type
    actions = DEMO_STAFF_GRANTS.get(
        f"{content_type.app_label}.{content_type.model}", DEMO_STAFF_GRANTS.get(content_type.app_label, ())
    )
    return permission.codename in {f"{action}_{content_type.model}" for action in actions}


def demo_staff_permissions() -> list[Permission]:
    """The permissions DEMO_STAFF_GRANTS names (those of the installed models: created by migrate)."""
    apps = {target.partition(".")[0] for target in DEMO_STAFF_GRANTS}
    candidates = Permission.objects.filter(content_type__app_label__in=apps).select_related("content_type")
    return [permission for permission in candidates if _granted(permission)]


def demo_staff_join(user: User) -> None:
    """Put the user in the "Demo staff" group, created or brought in line with DEMO_STAFF_GRANTS (idempotent);
    the group is its only source of rights."""
    group, _ = Group.objects.get_or_create(name=DEMO_STAFF_GROUP)
    group.permissions.set(demo_staff_permissions())
    user.groups.add(group)
    user.user_permissions.clear()  # an older `make run` granted them to the user one by one


@transaction.atomic
def demo_user_ensure() -> tuple[str, str]:
    """The demo user, made or brought in line, with a fresh API key (the previous one revoked): its password
    and the key's raw value."""
    # The local profile generates the password into $VAR_DIR/secrets.env; elsewhere a fresh one.
    password = getattr(settings, "DEMO_USER_PASSWORD", "") or secrets.token_urlsafe(18)
    user = User.objects.with_address(DEMO_EMAIL).first()
    if user is None:  # the operator's own account: its address counts as verified
        user = User.objects.create_user(
            DEMO_EMAIL, password, is_staff=True, is_superuser=False, email_verified_at=timezone.now()
        )
        credits_keeper().grant(user=user, amount=DEMO_CREDITS)
    elif not user.check_password(password) or user.is_superuser or not user.is_staff:
        # Also brings a demo user of an older `make run` (a fixed password, a superuser) in line.
        user.set_password(password)
        user.is_staff, user.is_superuser = True, False
        user.save(update_fields=["password", "is_staff", "is_superuser"])
    if not user.email_verified:  # made before addresses were verified, or changed since
        user.email_verified_at = timezone.now()
        user.save(update_fields=["email_verified_at"])
    demo_staff_join(user)
    # One live `make run` key at a time: the previous run's key is revoked.
    ApiKey.objects.active().filter(user=user, name=DEMO_KEY_NAME).update(revoked_at=timezone.now())
    issued = api_key_create(user=user, name=DEMO_KEY_NAME)
    return password, issued.raw


class Command(BaseCommand):
    help = "Create the local demo user if missing and issue it a fresh API key (for `make run`)."

    def handle(self, *args, **options):
        password, key = demo_user_ensure()
        self.stdout.write(f'Demo user:  {DEMO_EMAIL} (staff in the "{DEMO_STAFF_GROUP}" group, not a superuser)')
        self.stdout.write(f"Password:   {password}")
        self.stdout.write(f"API key:    {key}")
