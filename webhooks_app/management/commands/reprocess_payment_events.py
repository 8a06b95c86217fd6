from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from webhooks_app.inbound import inbound_events_reprocess
from webhooks_app.models import InboundEvent


class Command(BaseCommand):
    help = "Apply stored payment-provider events that failed (or the given event ids) again, oldest first."

    def add_arguments(self, parser):
        parser.add_argument("event_ids", nargs="*", help="Provider event ids (evt_...); default: every failed event.")

    def handle(self, *args, event_ids, **options):
        pks = None
        if event_ids:
            found = dict(InboundEvent.objects.filter(event_id__in=event_ids).values_list("event_id", "pk"))
            missing = sorted(set(event_ids) - set(found))
            if missing:
                raise CommandError(f"No stored event with id {', '.join(missing)}.")
            pks = list(found.values())

        def progress(index, total, event, outcome, error):
            line = f"[{index}/{total}] {event.event_id} {event.type}: {outcome}"
            self.stdout.write(f"{line} ({error})" if error else line)

        counts = inbound_events_reprocess(event_pks=pks, progress=progress)
        if not counts:
            self.stdout.write("No failed events to re-process.")
            return
        self.stdout.write("Done: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) + ".")
        if counts.get("failed"):
            raise CommandError(f"{counts['failed']} event(s) failed again; see the admin for the errors.")
