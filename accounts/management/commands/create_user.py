from django.core.management.base import BaseCommand, CommandError

from accounts.services import EmailTaken, password_problems, user_create


class Command(BaseCommand):
    help = (
        "Create a user who logs in by e-mail: a plain user, staff (--staff) or a superuser (--superuser). The "
        "operator vouches for the address: it is verified, and no verification mail is sent."
    )

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--password", required=True)
        parser.add_argument(
            "--staff",
            action="store_true",
            help="Staff, not a superuser: the admin login and the staff-only API endpoints, where it sees and does "
            "only what its permissions and groups allow (none until a superuser gives some).",
        )
        parser.add_argument(
            "--superuser",
            action="store_true",
            help="A superuser (implies --staff): every permission in the admin, including changing users.",
        )
        parser.add_argument("--credits", type=int, default=0, help="Starting image-generation credits.")

    def handle(self, *args, email, password, staff, superuser, credits, **options):
        if credits < 0:
            raise CommandError("--credits cannot be negative.")
        problems = password_problems(password=password, email=email)
        if problems:
            raise CommandError("Password refused: " + " ".join(problems))
        try:
            user = user_create(
                email=email,
                password=password,
                is_staff=staff,
                is_superuser=superuser,
                credits=credits,
                email_verified=True,
            )
        except EmailTaken as exc:
            raise CommandError(exc.message) from exc
        if user.is_superuser:
            made = "superuser (staff, every permission)"
        elif user.is_staff:
            made = "staff user (not a superuser; no admin permissions until given some)"
        else:
            made = "user (not staff)"
        self.stdout.write(f"Created {made} {user.email} ({user.id}).")
