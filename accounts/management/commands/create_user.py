from django.core.management.base import BaseCommand, CommandError

from accounts.services import EmailTaken, password_problems, user_create


class Command(BaseCommand):
    help = "Create a user who logs in by e-mail."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--password", required=True)
        parser.add_argument("--staff", action="store_true", help="Staff: admin site and staff-only endpoints.")
        parser.add_argument("--credits", type=int, default=0, help="Starting image-generation credits.")

    def handle(self, *args, email, password, staff, credits, **options):
        if credits < 0:
            raise CommandError("--credits cannot be negative.")
        problems = password_problems(password=password, email=email)
        if problems:
            raise CommandError("Password refused: " + " ".join(problems))
        try:
            user = user_create(email=email, password=password, is_staff=staff, credits=credits)
        except EmailTaken as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Created {'staff ' if staff else ''}user {user.email} ({user.id}).")
