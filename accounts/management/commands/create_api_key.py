from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.services import api_key_create
from core.http.errors import EmailUnverified


class Command(BaseCommand):
    help = "Issue an API key for a user. The raw key is the last line of the output."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--name", default="cli")

    def handle(self, *args, email, name, **options):
        try:
            user = User.objects.get_by_natural_key(email)
        except User.DoesNotExist as exc:
            raise CommandError(f"No user with e-mail {email}.") from exc
        try:
            issued = api_key_create(user=user, name=name)
        except EmailUnverified as exc:
            raise CommandError(
                f"{user.email} has not verified its address yet; if it is proven another way, mark it verified "
                "in the admin (Users, action 'Mark the e-mail address verified')."
            ) from exc
        self.stdout.write(f"API key {issued.api_key.name!r} (prefix {issued.api_key.prefix}) for {user.email}:")
        self.stdout.write(issued.raw)
