"""Records that first know only a Stripe Checkout Session (`cs_...`) and learn the object it created."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet


def link_checkout_session(
    rows: QuerySet, field: str, created_id: str, *, session_id: str = "", record_id: object = None, **also
) -> bool:
    """Give the row of `rows` whose `field` still holds a checkout session the id of the object the
    session created (`created_id`: a PaymentIntent, a subscription). Found by the session
    (`checkout.session.completed`) or by our record's id from the created object's metadata
    (`record_id`, an event about it that came first); whichever comes second finds `created_id`
    already taken and changes nothing, and a row linked once is never re-linked. `also`: more
    columns to set with the link. Returns whether a row was linked."""
    if not created_id or rows.filter(**{field: created_id}).exists():
        return False
    waiting = rows.filter(**{f"{field}__startswith": "cs_"})
    if session_id:
        waiting = waiting.filter(**{field: session_id})
    else:
        try:
            waiting = waiting.filter(pk=uuid.UUID(record_id)) if isinstance(record_id, str) else waiting.none()
        except ValueError:
            return False
    return bool(waiting.update(**{field: created_id}, **also))
