"""`manage.py release_reviewed`: one pass of the review-window job now (docs/payouts.md#release)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from tasks_market.services.deliveries import deliveries_release_due


class Command(BaseCommand):
    help = "Release deliveries submitted more than REVIEW_WINDOW_HOURS ago with no review (the beat: every 10 min)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--window-hours",
            type=int,
            default=None,
            help="This run's review window instead of REVIEW_WINDOW_HOURS (0: every submitted delivery).",
        )

    def handle(self, *args, window_hours, **options):
        if window_hours is not None:
            if window_hours < 0:
                self.stderr.write("--window-hours must be 0 or more")
                raise SystemExit(2)
            settings.REVIEW_WINDOW_HOURS = window_hours
        released = deliveries_release_due()
        self.stdout.write(self.style.SUCCESS(f"{released} deliver{'y' if released == 1 else 'ies'} released."))
