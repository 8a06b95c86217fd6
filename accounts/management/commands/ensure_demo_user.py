from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiKey, User
from accounts.services import api_key_create

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password-123"
DEMO_KEY_NAME = "make run"


class Command(BaseCommand):
    help = "Create the local demo user if missing and issue it a fresh API key (for `make run`)."

    @transaction.atomic
    def handle(self, *args, **options):
        user = User.objects.filter(email__iexact=DEMO_EMAIL).first()
        if user is None:
            user = User.objects.create_user(DEMO_EMAIL, DEMO_PASSWORD, is_staff=True, is_superuser=True, credits=100)
        # One live `make run` key at a time: the previous run's key is revoked.
        ApiKey.objects.active().filter(user=user, name=DEMO_KEY_NAME).update(revoked_at=timezone.now())
        issued = api_key_create(user=user, name=DEMO_KEY_NAME)
        self.stdout.write(f"Demo user:  {DEMO_EMAIL}")
        self.stdout.write(f"Password:   {DEMO_PASSWORD}")
        self.stdout.write(f"API key:    {issued.raw}")
