"""Writes for teams. The payment provider is told first; local state follows only if it agreed.

No lock is held while the provider answers. Hire creates the subscription under the idempotency key
`team-hire:<team id>` (the id is chosen before the call) and then saves the team. Unsubscribe and
reactivate first claim the team with a conditional UPDATE (so of concurrent requests one asks the
provider and the others get 409), call the provider outside any transaction, then record its answer,
or give the claim back if it failed. While the provider is being asked, a team being unsubscribed is
`cancelling` without `subscription_ends_at`, and one being reactivated is `active` with it; neither
can be unsubscribed or reactivated again until the call is over (or the claim is STALE_CLAIM old). Pause and
resume (a PATCH of `status`) claim the team the same way and tell the provider to stop or start collecting
(docs/decisions.md#pausing-a-team-pauses-billing).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.http.errors import InvalidState, NotFound, ProviderError, ProviderUnavailable
from core.ops.enqueue import enqueue_after_commit
from payments.providers import ProviderSubscription, get_payment_provider
from payments.sessions import link_checkout_session
from teams.models import Team, TeamStatus
from webhooks_app.services import event_publish

logger = logging.getLogger(__name__)

# A claim (see above) older than this belongs to a request that died while the provider answered (a
# provider call times out well within it): the next unsubscribe or reactivate takes it over.
STALE_CLAIM = timedelta(minutes=2)

# Fields an owner may change with PATCH; `status` is handled separately (pause / resume).
EDITABLE_FIELDS = (
    "display_name",
    "operation_mode",
    "workflow_phase",
    "trigger_mode",
    "default_currency",
    "auto_config",
    "orchestrator_cadence",
    "content_strategy",
    "config",
    "onboarding_step",
    "connected_accounts",
)


def _locked(*, team_id, owner) -> Team:
    team = Team.objects.select_for_update().filter(id=team_id, owner=owner).first()
    if team is None:
        raise NotFound()
    return team


def _owned(*, team_id, owner) -> Team:
    team = Team.objects.select_related("owner").filter(id=team_id, owner=owner).first()
    if team is None:
        raise NotFound()
    return team


def _publish(team: Team, event_type: str) -> None:
    event_publish(
        owner=team.owner,
        event_type=event_type,
        data={
            "team_id": str(team.id),
            "status": team.status,
            "tier": team.tier,
            "subscription_ends_at": team.subscription_ends_at.isoformat() if team.subscription_ends_at else None,
        },
    )


def _status_for(team: Team, subscription_status: str, cancel_at_period_end: bool) -> str:
    """Our team status for what the provider says about the subscription."""
    if subscription_status in ("active", "trialing"):
        if cancel_at_period_end:
            return TeamStatus.CANCELLING
        return TeamStatus.PAUSED if team.status == TeamStatus.PAUSED else TeamStatus.ACTIVE
    if subscription_status in ("past_due", "unpaid"):
        return TeamStatus.PAST_DUE
    if subscription_status in ("canceled", "cancelled", "incomplete_expired"):
        return TeamStatus.CANCELLED
    return team.status  # incomplete and the like: nothing to change yet


def _apply_subscription(team: Team, *, status: str, cancel_at_period_end: bool, period_end: datetime | None) -> None:
    now = timezone.now()
    new_status = _status_for(team, status, cancel_at_period_end)
    team.subscription_status = status
    if new_status == TeamStatus.CANCELLING:
        team.subscription_ends_at = period_end
    elif new_status in (TeamStatus.ACTIVE, TeamStatus.PAUSED, TeamStatus.PAST_DUE):
        team.subscription_ends_at = None
    if new_status == TeamStatus.CANCELLED and team.cancelled_at is None:
        team.cancelled_at = now
    if new_status in (TeamStatus.ACTIVE, TeamStatus.CANCELLING) and team.hired_at is None:
        team.hired_at = now
    team.status = new_status


def team_hire(
    *,
    owner,
    team_type: str,
    display_name: str,
    tier: str,
    success_url: str = "",
    cancel_url: str = "",
    **fields: Any,
) -> Team:
    """Create the subscription at the provider, then the team. Nothing is saved if the provider refuses.

    The provider's checkout page (`checkout_url`) links back to `success_url` / `cancel_url` when given.
    """
    team = Team(owner=owner, team_type=team_type, display_name=display_name, tier=tier, **fields)
    subscription: ProviderSubscription = get_payment_provider().create_subscription(
        customer_email=owner.mailing_address,  # the domain as IDNA 2008 A-labels (accounts.addresses)
        plan=tier,
        metadata={"team_id": str(team.id), "user_id": str(owner.id)},
        idempotency_key=f"team-hire:{team.id}",
        success_url=success_url,
        cancel_url=cancel_url,
    )
    team.payments_subscription_id = subscription.id
    team.checkout_url = subscription.checkout_url
    _apply_subscription(
        team,
        status=subscription.status,
        cancel_at_period_end=subscription.cancel_at_period_end,
        period_end=subscription.current_period_end,
    )
    with transaction.atomic():
        team.save()
        _publish(team, "team.hired")
    logger.info("team %s hired by %s on subscription %s (%s)", team.id, owner.id, subscription.id, team.status)
    return team


def team_update(*, team_id, owner, status: str | None = None, **changes: Any) -> Team:
    """Change the settings sent. A run-state change (pause / resume) is told to the payment provider first, with
    the settings applied only once it agreed (docs/decisions.md#pausing-a-team-pauses-billing)."""
    for name in changes:
        if name not in EDITABLE_FIELDS:
            raise ValueError(f"{name} cannot be changed here")
    team = _owned(team_id=team_id, owner=owner)
    if status is None or status == team.status == _settled_status(team):
        return _team_edit(team_id=team.pk, owner=owner, changes=changes)
    run_states = (TeamStatus.ACTIVE, TeamStatus.PAUSED)
    if status in run_states and team.status in run_states:  # the claim decides (409 while one is under way)
        return _run_state_change(team, pause=status == TeamStatus.PAUSED, changes=changes)
    raise InvalidState(f"A team cannot go from {team.status} to {status} this way.")


@transaction.atomic
def _team_edit(*, team_id, owner, changes: dict[str, Any]) -> Team:
    team = _locked(team_id=team_id, owner=owner)
    for name, value in changes.items():
        setattr(team, name, value)
    team.save()
    return team


# Pause and resume claim the team as unsubscribe does: while the provider is asked, a team being paused is
# `paused` without `paused_at`, one being resumed is `active` with it; either is settled when the provider agreed.
def _settled_status(team: Team) -> str:
    if team.status == TeamStatus.PAUSED and team.paused_at is None:
        return TeamStatus.ACTIVE  # being paused: not yet
    if team.status == TeamStatus.ACTIVE and team.paused_at is not None:
        return TeamStatus.PAUSED  # being resumed: not yet
    return team.status


def _run_state_change(team: Team, *, pause: bool, changes: dict[str, Any]) -> Team:
    now = timezone.now()
    stale = Q(updated_at__lt=now - STALE_CLAIM)
    if pause:
        settled = Q(status=TeamStatus.ACTIVE, paused_at__isnull=True, subscription_ends_at__isnull=True)
        in_flight, given_back = Q(status=TeamStatus.PAUSED, paused_at__isnull=True), {"status": TeamStatus.ACTIVE}
    else:
        settled = Q(status=TeamStatus.PAUSED, paused_at__isnull=False)
        in_flight, given_back = Q(status=TeamStatus.ACTIVE, paused_at__isnull=False), {"status": TeamStatus.PAUSED}
    claim_status = TeamStatus.PAUSED if pause else TeamStatus.ACTIVE
    if not Team.objects.filter(settled | (in_flight & stale), pk=team.pk).update(status=claim_status, updated_at=now):
        raise _refused(team, "A pause or resume of this team is under way, or it cannot be paused or resumed")
    # Ours while the team is in the claimed state (a settings PATCH meanwhile changes `updated_at`, not that).
    claimed = Team.objects.filter(in_flight, pk=team.pk)
    subscription = None
    if team.payments_subscription_id:
        # One key per transition: the team, pause or resume, and the instant of this claim (a later pause of the
        # same team is another request to the provider, a retried call of this one the same).
        key = f"team-{'pause' if pause else 'resume'}:{team.id}:{int(now.timestamp() * 1_000_000)}"
        try:
            subscription = get_payment_provider().set_collection_paused(
                team.payments_subscription_id, pause, idempotency_key=key
            )
        except Exception:
            claimed.update(**given_back, updated_at=timezone.now())  # the team as it was
            raise
    with transaction.atomic():
        locked = claimed.select_for_update().first()
        if locked is None:  # our claim was stale, taken over, and the request that took it finished first
            raise _refused(team, "A pause or resume of this team is under way")
        for name, value in changes.items():
            setattr(locked, name, value)
        locked.paused_at = now if pause else None
        if subscription is not None:
            locked.subscription_status = subscription.status
        locked.save()
        _publish(locked, "team.paused" if pause else "team.resumed")
    logger.info("team %s %s; the provider was told (%s)", team.id, "paused" if pause else "resumed", bool(subscription))
    return locked


def team_unsubscribe(*, team_id, owner) -> Team:
    """Cancel at the end of the billing period: the team keeps working until then."""
    team = _owned(team_id=team_id, owner=owner)
    now = timezone.now()
    active = Q(status=TeamStatus.ACTIVE, paused_at__isnull=True)  # not while a resume is under way
    claimable = active | Q(status=TeamStatus.CANCELLING, updated_at__lt=now - STALE_CLAIM)
    claim = Team.objects.filter(claimable, pk=team.pk, subscription_ends_at__isnull=True)
    if not claim.update(status=TeamStatus.CANCELLING, updated_at=now):
        raise _refused(team, "Only an active team can be unsubscribed")
    claimed = Team.objects.filter(pk=team.pk, status=TeamStatus.CANCELLING, subscription_ends_at__isnull=True)
    return _cancel_at_period_end(team, claimed, cancel=True)


def team_reactivate(*, team_id, owner) -> Team:
    """Reverse an unsubscribe before the period ends (docs/decisions.md#states). Of concurrent
    reactivations one claims the team and asks the provider; the others find it claimed (409)."""
    team = _owned(team_id=team_id, owner=owner)
    now = timezone.now()
    ends_at = team.subscription_ends_at
    if team.status == TeamStatus.CANCELLING and ends_at is not None and ends_at <= now:
        raise InvalidState("The billing period has ended; hire the team again instead.")
    claimable = Q(status=TeamStatus.CANCELLING) | Q(status=TeamStatus.ACTIVE, updated_at__lt=now - STALE_CLAIM)
    claim = Team.objects.filter(claimable, pk=team.pk, subscription_ends_at=ends_at, subscription_ends_at__gt=now)
    if ends_at is None or not claim.update(status=TeamStatus.ACTIVE, updated_at=now):
        raise _refused(team, "Only a team with a pending unsubscribe can be reactivated")
    claimed = Team.objects.filter(pk=team.pk, status=TeamStatus.ACTIVE, subscription_ends_at=ends_at)
    return _cancel_at_period_end(team, claimed, cancel=False)


def _cancel_at_period_end(team: Team, claimed, *, cancel: bool) -> Team:
    """Unsubscribe (`cancel`) or reactivate, after the claim: ask the provider with no transaction open;
    on failure give the claim back (the team's status as before) and re-raise; else record the
    subscription on the still-claimed row (`claimed`) and announce it once."""
    try:
        subscription = get_payment_provider().set_cancel_at_period_end(team.payments_subscription_id, cancel)
    except Exception:
        claimed.update(status=TeamStatus.ACTIVE if cancel else TeamStatus.CANCELLING, updated_at=timezone.now())
        raise
    with transaction.atomic():
        recorded = claimed.update(
            subscription_status=subscription.status,
            subscription_ends_at=subscription.current_period_end if cancel else None,
            updated_at=timezone.now(),
        )
        team.refresh_from_db()
        if recorded:
            _publish(team, "team.unsubscribed" if cancel else "team.reactivated")
    return team


def _refused(team: Team, rule: str) -> InvalidState:
    team.refresh_from_db()
    return InvalidState(f"{rule}; this one is {team.status}.")


def teams_cancel_ended(*, now: datetime | None = None) -> int:
    """Beat job: teams whose period has ended become cancelled. Each row is claimed by a
    conditional UPDATE, so two beats running at once cancel (and announce) each team once."""
    now = now or timezone.now()
    cancelled = 0
    due = Team.objects.filter(status=TeamStatus.CANCELLING, subscription_ends_at__lte=now).values_list("id", flat=True)
    for team_id in list(due):
        with transaction.atomic():
            claimed = Team.objects.filter(
                id=team_id, status=TeamStatus.CANCELLING, subscription_ends_at__lte=now
            ).update(status=TeamStatus.CANCELLED, cancelled_at=now, updated_at=now)
            if claimed:
                cancelled += 1
                _publish(Team.objects.select_related("owner").get(id=team_id), "team.cancelled")
    return cancelled


# --- Closing an account (accounts.closure; docs/decisions.md#closing-an-account) -------------------------

# A team in one of these has a subscription that renews; a closed account's is cancelled at the period's end.
RENEWING = (TeamStatus.ACTIVE, TeamStatus.PAUSED, TeamStatus.PAST_DUE)
WIND_DOWN_TASK = "teams.tasks.cancel_closed_account_team"


def teams_wind_down(*, user) -> int:
    """The closing step of teams, inside the close's transaction: each team whose subscription renews is
    claimed as an unsubscribe claims it (`cancelling`, no `subscription_ends_at` yet; an unsubscribe that
    died mid-call is taken over), and the provider is asked after commit (`team_wind_down_cancel`).
    An onboarding team has no paid subscription to cancel. Returns how many were claimed."""
    now = timezone.now()
    stale = Q(status=TeamStatus.CANCELLING, subscription_ends_at__isnull=True, updated_at__lt=now - STALE_CLAIM)
    claimable = Q(status__in=RENEWING) | stale
    claimed = 0
    for team_id in list(Team.objects.filter(claimable, owner=user).values_list("pk", flat=True)):
        if Team.objects.filter(claimable, pk=team_id).update(status=TeamStatus.CANCELLING, updated_at=now):
            enqueue_after_commit(WIND_DOWN_TASK, str(team_id))
            claimed += 1
    return claimed


def team_wind_down_cancel(*, team_id) -> Team | None:
    """A closed account's claimed team: the provider cancels its subscription at the period's end, asked
    with no transaction open under `team-cancel:<team id>` (a repeated call is the same request), then the
    end is recorded on the still-claimed row and `team.unsubscribed` announced, once. A team recorded
    already is not asked again; a failure leaves the claim for `teams_wind_down_catch_up`."""
    claimed = Team.objects.filter(
        pk=team_id, status=TeamStatus.CANCELLING, subscription_ends_at__isnull=True, owner__is_active=False
    )
    team = claimed.select_related("owner").first()
    if team is None:
        return None
    subscription = get_payment_provider().set_cancel_at_period_end(
        team.payments_subscription_id, True, idempotency_key=f"team-cancel:{team.id}"
    )
    with transaction.atomic():
        recorded = claimed.update(
            subscription_status=subscription.status,
            subscription_ends_at=subscription.current_period_end,
            updated_at=timezone.now(),
        )
        team.refresh_from_db()
        if recorded:
            _publish(team, "team.unsubscribed")
    logger.info("team %s of a closed account ends with its period (%s)", team.id, team.subscription_ends_at)
    return team


def teams_wind_down_catch_up(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat: a closed account's team still claimed and unrecorded STALE_CLAIM after its claim (its job was
    lost, or the provider failed) is asked again. Returns how many were recorded."""
    now = now or timezone.now()
    due = Team.objects.filter(
        status=TeamStatus.CANCELLING,
        subscription_ends_at__isnull=True,
        owner__is_active=False,
        updated_at__lt=now - STALE_CLAIM,
    ).values_list("pk", flat=True)
    recorded = 0
    for team_id in list(due[:limit]):
        try:
            if team_wind_down_cancel(team_id=team_id) is not None:
                recorded += 1
        except (ProviderError, ProviderUnavailable):
            logger.warning("cancel of closed account's team %s failed; the next run retries", team_id, exc_info=True)
    return recorded


# --- Provider events (registered with the payments webhook in apps.py) ---------------------------------


def _team_for_subscription(subscription_id: str | None) -> Team | None:
    if not subscription_id:
        return None
    team = (
        Team.objects.select_for_update()
        .select_related("owner")
        .filter(payments_subscription_id=subscription_id)
        .first()
    )
    if team is None:
        logger.info("payment event for unknown subscription %s ignored", subscription_id)
    return team


def team_link_subscription(*, subscription_id: str, session_id: str = "", team_id: object = None) -> bool:
    """Give the team whose subscription reference is still a checkout session (`cs_...`) the id of
    the subscription the session created (Stripe Checkout creates it only when the customer pays).

    Found by the session (`checkout.session.completed`) or by the team id in the event's metadata /
    `client_reference_id` (a `customer.subscription.*` event that came first); whichever comes
    second finds the team linked and changes nothing. A team linked to a subscription keeps it.
    """
    linked = link_checkout_session(
        Team.objects.all(),
        "payments_subscription_id",
        subscription_id,
        session_id=session_id,
        record_id=team_id,
        updated_at=timezone.now(),
    )
    if linked:
        logger.info("checkout %s created subscription %s", session_id or f"of team {team_id}", subscription_id)
    return linked


def _is_stale(team: Team, event_created: datetime) -> bool:
    if team.subscription_event_at and event_created < team.subscription_event_at:
        logger.info("stale event for team %s (%s < %s) ignored", team.id, event_created, team.subscription_event_at)
        return True
    return False


def _from_timestamp(value) -> datetime | None:
    if value in (None, ""):
        return None
    return datetime.fromtimestamp(int(value), tz=UTC) if not isinstance(value, datetime) else value


def team_apply_subscription_event(
    *, subscription_id: str, event_created: datetime, status: str, cancel_at_period_end: bool, period_end
) -> Team | None:
    team = _team_for_subscription(subscription_id)
    if team is None or _is_stale(team, event_created):
        return team
    before = team.status
    _apply_subscription(
        team, status=status, cancel_at_period_end=cancel_at_period_end, period_end=_from_timestamp(period_end)
    )
    team.subscription_event_at = event_created
    team.save()
    if before != team.status:
        transitions = {
            TeamStatus.ACTIVE: "team.reactivated" if before == TeamStatus.CANCELLING else "team.activated",
            TeamStatus.CANCELLING: "team.unsubscribed",
            TeamStatus.CANCELLED: "team.cancelled",
            TeamStatus.PAST_DUE: "team.past_due",
        }
        if team.status in transitions:
            _publish(team, transitions[team.status])
    return team


def team_apply_invoice_event(*, subscription_id: str, event_created: datetime, paid: bool) -> Team | None:
    team = _team_for_subscription(subscription_id)
    if team is None or _is_stale(team, event_created):
        return team
    if paid and team.status == TeamStatus.PAST_DUE:
        team.status, team.subscription_status = TeamStatus.ACTIVE, "active"
        _publish(team, "team.activated")
    elif not paid and team.status == TeamStatus.ACTIVE:
        team.status, team.subscription_status = TeamStatus.PAST_DUE, "past_due"
        _publish(team, "team.past_due")
    team.subscription_event_at = event_created
    team.save()
    return team


def team_apply_checkout_completed(*, subscription_id: str, event_created: datetime) -> Team | None:
    """Checkout finished: the subscription is paid for, so an onboarding team becomes active."""
    team = _team_for_subscription(subscription_id)
    if team is None or _is_stale(team, event_created):
        return team
    if team.status == TeamStatus.ONBOARDING:
        team.status, team.subscription_status = TeamStatus.ACTIVE, "active"
        team.hired_at = team.hired_at or timezone.now()
        _publish(team, "team.activated")
    team.subscription_event_at = event_created
    team.save()
    return team
