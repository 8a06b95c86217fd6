from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.services import api_key_create


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
        issued = api_key_create(user=user, name=name)
        self.stdout.write(f"API key {issued.api_key.name!r} (prefix {issued.api_key.prefix}) for {user.email}:")
        self.stdout.write(issued.raw)
