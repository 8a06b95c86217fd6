import secrets

from django.conf import settings
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import ApiKey, User, normalise_email
from accounts.services import api_key_create

DEMO_EMAIL = "demo@example.com"
DEMO_KEY_NAME = "make run"
# The demo user is staff, not a superuser: it gets every permission on the project's own models, so the
# whole admin works, but users only to look at. Changing a user would let it tick `is_superuser` on
# itself; with view only it cannot raise its own rights.
ADMIN_APPS = ("core", "accounts", "brands", "tasks_market", "teams", "assistant", "webhooks_app", "scrapers")
VIEW_ONLY_MODELS = ("user",)


def demo_permissions():
    view_only = Q(content_type__app_label="accounts", content_type__model__in=VIEW_ONLY_MODELS)
    return Permission.objects.filter(content_type__app_label__in=ADMIN_APPS).exclude(
        view_only & ~Q(codename__startswith="view_")
    )


class Command(BaseCommand):
    help = "Create the local demo user if missing and issue it a fresh API key (for `make run`)."

    @transaction.atomic
    def handle(self, *args, **options):
        # The local profile generates the password into $VAR_DIR/secrets.env; elsewhere a fresh one.
        password = getattr(settings, "DEMO_USER_PASSWORD", "") or secrets.token_urlsafe(18)
        user = User.objects.filter(email=normalise_email(DEMO_EMAIL)).first()
        if user is None:
            user = User.objects.create_user(DEMO_EMAIL, password, is_staff=True, is_superuser=False, credits=100)
        elif not user.check_password(password) or user.is_superuser or not user.is_staff:
            # Also brings a demo user of an older `make run` (a fixed password, a superuser) in line.
            user.set_password(password)
            user.is_staff, user.is_superuser = True, False
            user.save(update_fields=["password", "is_staff", "is_superuser"])
        user.user_permissions.set(demo_permissions())
        # One live `make run` key at a time: the previous run's key is revoked.
        ApiKey.objects.active().filter(user=user, name=DEMO_KEY_NAME).update(revoked_at=timezone.now())
        issued = api_key_create(user=user, name=DEMO_KEY_NAME)
        self.stdout.write(f"Demo user:  {DEMO_EMAIL} (staff: the admin, not a superuser)")
        self.stdout.write(f"Password:   {password}")
        self.stdout.write(f"API key:    {issued.raw}")
