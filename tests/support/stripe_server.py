"""A Stripe stand-in on 127.0.0.1 that honours `Idempotency-Key` as Stripe does, for the Stripe adapter.

It creates Checkout Sessions (a payment session makes its payment intent, a subscription session its
subscription), payment intents, customers, subscriptions and refunds (whole or partial), reads sessions
and intents, cancels and captures intents (a second cancel or capture is refused, as Stripe does),
updates subscriptions (`cancel_at_period_end`, `pause_collection`); and for Connect: Express accounts,
account links, transfers (out of the platform's balance, or from a charge: `source_transaction`), transfer
reversals and payouts made as a connected account (`Stripe-Account`).

It lists as Stripe lists (newest first, `limit`, `starting_after`, `has_more`): transfers (by
`transfer_group`), a connected account's payouts (`Stripe-Account`), refunds (by `payment_intent`) and
balance transactions (the platform's, or an account's; `created[gte]`, `expand[]=data.source`); and
answers `GET /v1/balance` (available by currency; nothing is pending). Money is modelled in balance
transactions, as Stripe keeps them: a capture (`charge`), a refund (`refund`), a transfer (`transfer` on the
platform, `payment` on the account: a `py_` whose `source_transfer` is the transfer), a reversal
(`transfer_refund` / `payment_refund`), a payout (`payout`) and a failed payout (`payout_failure`); Stripe's
fees are not modelled (every `fee` is 0). `balances` is each connected account's balance.

It records every request (`calls`: method, path, form fields, Idempotency-Key, Stripe-Account), replays
the first answer for a key it has seen (keys are scoped per account, as Stripe scopes them), refuses a
key reused with other parameters (400 `idempotency_error`), and can be told to fail the next POSTs (a
failure is not remembered for its key, as when Stripe fails before it starts executing) or to hold them
until the test lets them go (to look at the database while the provider is being asked).

What happens at Stripe outside our calls is done by methods of the state (`pay`, `complete_onboarding`,
`restrict`, `expire_authorisation`, `open_dispute`, `close_dispute`, `settle_payout`), each returning the
signed event Stripe would send (`account.updated`, `payment_intent.canceled`, `charge.dispute.created` /
`.closed`, `payout.paid` / `.failed`; a connected account's events carry a top-level `account`), built
and signed like the local provider's (payments.provider_events) under Stripe's own `Stripe-Signature` header.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from payments import signing
from payments.provider_events import SignedEvent, provider_id, signing_secret

Form = list[tuple[str, str]]


@dataclass(frozen=True)
class Call:
    """One request as the stand-in received it."""

    method: str
    path: str
    form: Form  # the form body's fields in order (POST), or the query's (GET)
    key: str | None  # Idempotency-Key
    account: str | None  # Stripe-Account

    @property
    def fields(self) -> dict[str, str]:
        return dict(self.form)


@dataclass
class StripeState:
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Idempotency-Key)
    calls: list[Call] = field(default_factory=list)
    # By (Stripe-Account, Idempotency-Key): (status, body, path, the request's parameters).
    answers: dict[tuple[str | None, str], tuple[int, dict, str, tuple]] = field(default_factory=dict)
    subscriptions: dict[str, dict] = field(default_factory=dict)  # by id
    sessions: dict[str, dict] = field(default_factory=dict)  # Checkout Sessions by id
    intents: dict[str, dict] = field(default_factory=dict)  # PaymentIntents by id
    charges: dict[str, dict] = field(default_factory=dict)  # by id
    accounts: dict[str, dict] = field(default_factory=dict)  # Connect accounts by id
    account_links: list[dict] = field(default_factory=list)
    transfers: dict[str, dict] = field(default_factory=dict)  # by id
    payouts: dict[str, dict] = field(default_factory=dict)  # by id, each with its "_account"
    disputes: dict[str, dict] = field(default_factory=dict)  # by id
    refunds: dict[str, dict] = field(default_factory=dict)  # by id
    reversals: dict[str, dict] = field(default_factory=dict)  # transfer reversals by id
    balances: dict[str, dict[str, int]] = field(default_factory=dict)  # account → currency → minor units
    # Every movement of money, each with its "_account" (None: the platform) and the "_source" object's id.
    balance_transactions: list[dict] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)  # statuses for the next POSTs (not remembered for a key)
    hold: threading.Event | None = None  # POSTs wait until it is set
    held: threading.Event = field(default_factory=threading.Event)  # set once a create is waiting
    lock: threading.RLock = field(default_factory=threading.RLock)

    def keys(self, path: str) -> list[str | None]:
        with self.lock:
            return [key for method, p, key in self.requests if method == "POST" and p == path]

    def posts(self, path: str) -> list[Call]:
        """The POSTs to `path` (a prefix when it ends with "/"), in order."""
        with self.lock:
            return [
                c
                for c in self.calls
                if c.method == "POST" and (c.path == path or (path.endswith("/") and c.path.startswith(path)))
            ]

    def objects_created(self, path: str) -> int:
        """How many distinct objects a create path made (replays of a key make none)."""
        with self.lock:
            return len({key for key, (status, _, p, _) in self.answers.items() if status == 200 and p == path})

    # --- What happens at Stripe outside our calls, each with the event Stripe sends -------------

    def pay(self, intent_id: str) -> SignedEvent:
        """The customer pays: an automatic intent is captured (`payment_intent.succeeded`), a manual
        one is authorised (`payment_intent.amount_capturable_updated`); either way it has a charge."""
        with self.lock:
            intent = self.intents[intent_id]
            charge = _charge(self, intent)
            intent["latest_charge"] = charge["id"]
            if intent["capture_method"] == "manual":
                intent["status"], intent["amount_capturable"] = "requires_capture", intent["amount"]
                charge["captured"], charge["amount_captured"] = False, 0
                kind = "payment_intent.amount_capturable_updated"
            else:
                intent["status"], intent["amount_received"] = "succeeded", intent["amount"]
                kind = "payment_intent.succeeded"
                _book(self, None, "charge", charge["amount"], charge["currency"], charge["id"])
            return stripe_event(kind, dict(intent))

    def pay_session(self, session_id: str) -> tuple[str, SignedEvent]:
        """The customer pays on a Checkout Session's page: its intent's id and event."""
        with self.lock:
            intent_id = self.sessions[session_id]["payment_intent"]
        return intent_id, self.pay(intent_id)

    def complete_onboarding(self, account_id: str, *, name: str = "Seller", created: int | None = None) -> SignedEvent:
        """The owner finishes Stripe's hosted onboarding: details submitted, charges and payouts enabled."""
        with self.lock:
            account = self.accounts[account_id]
            account.update(details_submitted=True, charges_enabled=True, payouts_enabled=True)
            account["capabilities"] = {"transfers": "active"}
            account["requirements"] = {"currently_due": [], "past_due": [], "disabled_reason": None}
            account["business_profile"] = {"name": name}
            return stripe_event("account.updated", dict(account), account=account_id, created=created)

    def restrict(self, account_id: str, *, created: int | None = None) -> SignedEvent:
        """Stripe needs more from an onboarded owner and stops their payouts until they give it."""
        with self.lock:
            account = self.accounts[account_id]
            account["payouts_enabled"] = False
            account["requirements"] = {
                "currently_due": ["individual.verification.document"],
                "past_due": ["individual.verification.document"],
                "disabled_reason": "requirements.past_due",
            }
            return stripe_event("account.updated", dict(account), account=account_id, created=created)

    def expire_authorisation(self, intent_id: str) -> SignedEvent:
        """A held authorisation lapses: Stripe cancels the intent (`cancellation_reason=automatic`)."""
        with self.lock:
            intent = self.intents[intent_id]
            intent["status"], intent["cancellation_reason"] = "canceled", "automatic"
            return stripe_event("payment_intent.canceled", dict(intent))

    def open_dispute(self, intent_id: str, *, reason: str = "fraudulent") -> tuple[str, SignedEvent]:
        """The cardholder disputes the charge with their bank: the dispute's id and its event."""
        with self.lock:
            intent = self.intents[intent_id]
            charge = self.charges[intent["latest_charge"]]
            dispute = {
                "id": provider_id("dp"),
                "object": "dispute",
                "amount": charge["amount"],
                "currency": charge["currency"],
                "charge": charge["id"],
                "payment_intent": intent_id,
                "reason": reason,
                "status": "needs_response",
                "created": int(time.time()),
            }
            self.disputes[dispute["id"]] = dispute
            charge["disputed"] = True
            return dispute["id"], stripe_event("charge.dispute.created", dict(dispute))

    def close_dispute(self, dispute_id: str, *, status: str = "lost") -> SignedEvent:
        with self.lock:
            dispute = self.disputes[dispute_id]
            dispute["status"] = status
            return stripe_event("charge.dispute.closed", dict(dispute))

    def settle_payout(self, payout_id: str, *, paid: bool = True) -> SignedEvent:
        """The bank takes the payout (`payout.paid`) or sends it back (`payout.failed`: the money returns
        to the account's balance)."""
        with self.lock:
            payout = self.payouts[payout_id]
            account = payout["_account"]
            if paid:
                payout["status"] = "paid"
            else:
                payout.update(
                    status="failed", failure_code="account_closed", failure_message="The bank account has been closed."
                )
                _credit(self, account, payout["currency"], payout["amount"])
                _book(self, account, "payout_failure", payout["amount"], payout["currency"], payout_id)
            body = {k: v for k, v in payout.items() if k != "_account"}
            return stripe_event(f"payout.{payout['status']}", body, account=account)


def stripe_event(
    event_type: str, obj: dict, *, account: str | None = None, created: int | None = None, secret: str | None = None
) -> SignedEvent:
    """A Stripe event `{id, object, type, created, data: {object}[, account]}`, signed with the webhook
    secret (PAYMENTS_WEBHOOK_SECRET's first, by default) under `Stripe-Signature`."""
    now = int(time.time())
    event = {
        "id": provider_id("evt"),
        "object": "event",
        "api_version": "2025-03-31.basil",
        "type": event_type,
        "created": now if created is None else int(created),
        "livemode": False,
        "data": {"object": obj},
    }
    if account is not None:
        event["account"] = account
    body = json.dumps(event, separators=(",", ":"), sort_keys=True).encode()
    header = signing.signature_header(body, [secret or signing_secret()], now)
    return SignedEvent(
        event_id=event["id"],
        event_type=event_type,
        body=body,
        headers={"Content-Type": "application/json", signing.STRIPE_HEADER: header},
    )


def _metadata(form: dict[str, str], prefix: str = "") -> dict[str, str]:
    start = f"{prefix}[metadata][" if prefix else "metadata["
    return {k[len(start) : -1]: v for k, v in form.items() if k.startswith(start)}


def _refused(message: str, status: int = 400, kind: str = "invalid_request_error") -> tuple[int, dict]:
    return status, {"error": {"type": kind, "message": message}}


def _credit(state: StripeState, account: str, currency: str, amount: int) -> None:
    balance = state.balances.setdefault(account, {})
    balance[currency] = balance.get(currency, 0) + amount


def _book(state: StripeState, account: str | None, kind: str, amount: int, currency: str, source: str) -> None:
    """A balance transaction of the platform (`account` None) or a connected account."""
    state.balance_transactions.append(
        {
            "id": f"txn_{secrets.token_hex(12)}",
            "object": "balance_transaction",
            "type": kind,
            "amount": amount,
            "fee": 0,
            "net": amount,
            "currency": currency,
            "status": "available",
            "created": int(time.time()),
            "_account": account,
            "_source": source,
        }
    )


def _page(objects: list[dict], query: list[tuple[str, str]], url: str) -> dict:
    """A Stripe list of `objects` (oldest first as stored; listed newest first), `limit` (10 by default,
    at most 100) after `starting_after`."""
    params = dict(query)
    newest_first = list(reversed(objects))
    after = params.get("starting_after")
    if after:
        ids = [o["id"] for o in newest_first]
        newest_first = newest_first[ids.index(after) + 1 :] if after in ids else []
    limit = max(1, min(int(params.get("limit") or 10), 100))
    return {"object": "list", "url": url, "data": newest_first[:limit], "has_more": len(newest_first) > limit}


def _source_object(state: StripeState, txn: dict) -> dict | str:
    """A balance transaction's `source`, expanded as `expand[]=data.source` asks."""
    source = txn["_source"]
    if source.startswith("py_"):  # a connected account's incoming payment: a charge naming its transfer
        transfer = state.transfers[source.split(":", 1)[1]]
        return {"id": source.split(":", 1)[0], "object": "charge", "source_transfer": transfer["id"]}
    for objects in (state.charges, state.refunds, state.transfers, state.reversals, state.payouts):
        if source in objects:
            return {k: v for k, v in objects[source].items() if not k.startswith("_")}
    return source


def _list(state: StripeState, path: str, query: list[tuple[str, str]], account: str | None) -> dict | None:
    """A list endpoint's page, or None when `path` is no list."""
    params = dict(query)
    if path == "/v1/transfers":
        group = params.get("transfer_group")
        found = [dict(t) for t in state.transfers.values() if group is None or t["transfer_group"] == group]
    elif path == "/v1/payouts":
        found = [
            {k: v for k, v in p.items() if k != "_account"} for p in state.payouts.values() if p["_account"] == account
        ]
    elif path == "/v1/refunds":
        intent = params.get("payment_intent")
        found = [dict(r) for r in state.refunds.values() if intent is None or r["payment_intent"] == intent]
    elif path == "/v1/balance_transactions":
        since = int(params.get("created[gte]") or 0)
        expand = ("expand[]", "data.source") in query
        found = []
        for txn in state.balance_transactions:
            if txn["_account"] == account and txn["created"] >= since:
                body = {k: v for k, v in txn.items() if not k.startswith("_")}
                source = _source_object(state, txn)
                body["source"] = source if expand else (source["id"] if isinstance(source, dict) else source)
                found.append(body)
    else:
        return None
    return _page(found, query, path)


def _balance(state: StripeState, account: str | None) -> dict:
    """`GET /v1/balance`: what the account's (or the platform's) balance transactions sum to."""
    totals: dict[str, int] = {}
    for txn in state.balance_transactions:
        if txn["_account"] == account:
            totals[txn["currency"]] = totals.get(txn["currency"], 0) + txn["net"]
    available = [{"amount": amount, "currency": currency} for currency, amount in totals.items()]
    return {"object": "balance", "livemode": False, "available": available, "pending": []}


def _intent(form: dict[str, str]) -> dict:
    intent_id = f"pi_{secrets.token_hex(12)}"
    return {
        "id": intent_id,
        "object": "payment_intent",
        "amount": int(form["amount"]),
        "currency": form["currency"],
        "status": "requires_payment_method",
        "capture_method": form.get("capture_method", "manual"),
        "client_secret": f"{intent_id}_secret_{secrets.token_hex(8)}",
        "metadata": _metadata(form),
        "transfer_group": form.get("transfer_group"),
        "last_payment_error": None,
        "latest_charge": None,
    }


def _charge(state: StripeState, intent: dict) -> dict:
    charge = {
        "id": f"ch_{secrets.token_hex(12)}",
        "object": "charge",
        "amount": intent["amount"],
        "amount_captured": intent["amount"],
        "amount_refunded": 0,
        "captured": True,
        "refunded": False,
        "disputed": False,
        "currency": intent["currency"],
        "payment_intent": intent["id"],
        "transfer_group": intent.get("transfer_group"),
        "status": "succeeded",
    }
    state.charges[charge["id"]] = charge
    return charge


def _subscription(form: dict[str, str]) -> dict:
    return {
        "id": f"sub_{secrets.token_hex(12)}",
        "object": "subscription",
        "status": "active",
        "cancel_at_period_end": False,
        "pause_collection": None,
        "current_period_end": int(time.time()) + 30 * 86400,
        "metadata": _metadata(form),
    }


def _session(state: StripeState, form: dict[str, str]) -> dict:
    session_id = f"cs_test_{secrets.token_hex(12)}"
    session = {
        "id": session_id,
        "object": "checkout.session",
        "mode": form.get("mode", "payment"),
        "url": f"https://checkout.stripe.test/c/pay/{session_id}",
        "status": "complete",
        "payment_status": "paid",
        "metadata": _metadata(form),
        "client_reference_id": form.get("client_reference_id"),
        "expires_at": int(time.time()) + 86400,
        "payment_intent": None,
        "subscription": None,
    }
    if session["mode"] == "subscription":
        subscription = {**_subscription({}), "metadata": _metadata(form, "subscription_data")}
        state.subscriptions[subscription["id"]] = subscription
        session["subscription"] = subscription["id"]
    else:
        session["amount_total"] = int(form["line_items[0][price_data][unit_amount]"])
        session["currency"] = form["line_items[0][price_data][currency]"]
        intent = _intent(
            {
                "amount": str(session["amount_total"]),
                "currency": session["currency"],
                "capture_method": form.get("payment_intent_data[capture_method]", "automatic"),
                "transfer_group": form.get("payment_intent_data[transfer_group]"),
            }
        )
        intent["metadata"] = _metadata(form, "payment_intent_data")
        state.intents[intent["id"]] = intent
        session["payment_intent"] = intent["id"]
    state.sessions[session_id] = session
    return session


def stored_intent(state: StripeState, form: dict[str, str]) -> dict:
    intent = _intent(form)
    state.intents[intent["id"]] = intent
    return intent


def _intent_action(state: StripeState, path: str, form: dict[str, str]) -> tuple[int, dict]:
    _, _, _, intent_id, action = path.split("/")
    intent = state.intents.get(intent_id)
    done = {"cancel": "canceled", "capture": "succeeded"}.get(action)
    if intent is None or done is None:
        return 404, {"error": {"message": "No such payment_intent"}}
    if intent["status"] in ("canceled", "succeeded"):
        return _refused(f"This PaymentIntent's status is {intent['status']}.")
    if action == "capture" and intent.get("latest_charge"):
        captured = int(form.get("amount_to_capture") or intent["amount"])
        if not 0 < captured <= intent["amount"]:
            return _refused("amount_to_capture must be at most the amount capturable.")
        charge = state.charges[intent["latest_charge"]]
        # Stripe records the part left uncaptured as refunded on the charge.
        charge.update(captured=True, amount_captured=captured, amount_refunded=intent["amount"] - captured)
        intent["amount_received"], intent["amount_capturable"] = captured, 0
        _book(state, None, "charge", captured, charge["currency"], charge["id"])
    intent["status"] = done
    return 200, dict(intent)


def _refund(state: StripeState, form: dict[str, str]) -> tuple[int, dict]:
    intent = state.intents.get(form.get("payment_intent", ""))
    refund = {
        "id": f"re_{secrets.token_hex(8)}",
        "object": "refund",
        "status": "succeeded",
        "payment_intent": form.get("payment_intent"),
        "metadata": _metadata(form),
        "created": int(time.time()),
    }
    if intent is None or not intent.get("latest_charge"):
        refund.update(
            amount=int(form.get("amount") or (intent or {}).get("amount") or 0),
            currency=(intent or {}).get("currency") or "usd",
        )
        state.refunds[refund["id"]] = refund
        return 200, refund  # an intent a test made by hand: nothing to account for
    charge = state.charges[intent["latest_charge"]]
    left = charge["amount_captured"] - charge["amount_refunded"] if charge["captured"] else 0
    amount = int(form.get("amount") or left)
    if not 0 < amount <= left:
        return _refused(f"Refund amount ({amount}) is greater than the charge's unrefunded amount ({left}).")
    charge["amount_refunded"] += amount
    charge["refunded"] = charge["amount_refunded"] >= charge["amount"]
    refund.update(amount=amount, currency=charge["currency"], charge=charge["id"])
    state.refunds[refund["id"]] = refund
    _book(state, None, "refund", -amount, charge["currency"], refund["id"])
    return 200, dict(refund)


def _account(state: StripeState, form: dict[str, str]) -> tuple[int, dict]:
    if form.get("type") != "express" or form.get("country") == "" or form.get("email") == "":
        return _refused("An Express account needs `type=express`; an empty `country` or `email` is refused.")
    account = {
        "id": f"acct_{secrets.token_hex(8)}",
        "object": "account",
        "type": "express",
        "country": form.get("country", "US"),  # the platform's country
        "email": form.get("email"),
        "charges_enabled": False,
        "payouts_enabled": False,
        "details_submitted": False,
        "capabilities": {"transfers": "inactive"},
        "requirements": {
            "currently_due": ["business_type", "external_account", "tos_acceptance.date"],
            "past_due": ["business_type", "external_account", "tos_acceptance.date"],
            "disabled_reason": "requirements.past_due",
        },
        "settings": {"payouts": {"schedule": {"interval": form.get("settings[payouts][schedule][interval]", "daily")}}},
        "business_profile": {"name": None},
        "metadata": _metadata(form),
    }
    state.accounts[account["id"]] = account
    return 200, account


def _account_link(state: StripeState, form: dict[str, str]) -> tuple[int, dict]:
    if form.get("account") not in state.accounts:
        return _refused(f"No such account: '{form.get('account')}'")
    if form.get("type") not in ("account_onboarding", "account_update") or not form.get("return_url"):
        return _refused("An account link needs a `type` and a `return_url`.")
    link = {
        "object": "account_link",
        "url": f"https://connect.stripe.test/setup/e/{form['account']}/{secrets.token_urlsafe(12)}",
        "created": int(time.time()),
        "expires_at": int(time.time()) + 300,
    }
    state.account_links.append({**link, **form})
    return 200, link


def _transfer(state: StripeState, form: dict[str, str]) -> tuple[int, dict]:
    destination, currency = form.get("destination", ""), form.get("currency", "")
    if destination not in state.accounts:
        return _refused(f"No such destination: '{destination}'")
    amount = int(form.get("amount") or 0)
    if amount <= 0 or not currency:
        return _refused("A transfer needs a positive `amount` and a `currency`.")
    source = form.get("source_transaction")
    if source:
        charge = state.charges.get(source)
        if charge is None:
            return _refused(f"No such charge: '{source}'")
        moved = sum(t["amount"] for t in state.transfers.values() if t["source_transaction"] == source)
        if charge["currency"] != currency or moved + amount > charge["amount_captured"]:
            return _refused("The transfer amount exceeds what is left of the source transaction.")
    transfer = {
        "id": f"tr_{secrets.token_hex(12)}",
        "object": "transfer",
        "amount": amount,
        "amount_reversed": 0,
        "reversed": False,
        "currency": currency,
        "destination": destination,
        "transfer_group": form.get("transfer_group"),
        "source_transaction": source,
        "metadata": _metadata(form),
        "created": int(time.time()),
    }
    state.transfers[transfer["id"]] = transfer
    _credit(state, destination, currency, amount)
    _book(state, None, "transfer", -amount, currency, transfer["id"])
    _book(state, destination, "payment", amount, currency, f"py_{secrets.token_hex(12)}:{transfer['id']}")
    return 200, dict(transfer)


def _reversal(state: StripeState, path: str, form: dict[str, str]) -> tuple[int, dict]:
    transfer = state.transfers.get(path.split("/")[3])
    if transfer is None:
        return 404, {"error": {"message": "No such transfer"}}
    left = transfer["amount"] - transfer["amount_reversed"]
    amount = int(form.get("amount") or left)
    if not 0 < amount <= left:
        return _refused(f"The reversal amount ({amount}) is more than is left of the transfer ({left}).")
    transfer["amount_reversed"] += amount
    transfer["reversed"] = transfer["amount_reversed"] == transfer["amount"]
    _credit(state, transfer["destination"], transfer["currency"], -amount)
    reversal_id = f"trr_{secrets.token_hex(12)}"
    state.reversals[reversal_id] = {
        "id": reversal_id,
        "object": "transfer_reversal",
        "amount": amount,
        "currency": transfer["currency"],
        "transfer": transfer["id"],
        "created": int(time.time()),
    }
    _book(state, None, "transfer_refund", amount, transfer["currency"], reversal_id)
    # The connected account's side: a refund of the payment the transfer made there (`pyr_`).
    _book(
        state, transfer["destination"], "payment_refund", -amount, transfer["currency"], f"pyr_{secrets.token_hex(12)}"
    )
    expanded = form.get("expand[]") == "transfer"
    return 200, {**state.reversals[reversal_id], "transfer": dict(transfer) if expanded else transfer["id"]}


def _payout(state: StripeState, form: dict[str, str], account: str | None) -> tuple[int, dict]:
    if account is None or account not in state.accounts:
        return _refused("Make payouts as the connected account (`Stripe-Account`).", kind="invalid_request_error")
    currency, amount = form.get("currency", ""), int(form.get("amount") or 0)
    available = state.balances.get(account, {}).get(currency, 0)
    if amount <= 0 or amount > available:
        return _refused(
            "You have insufficient funds in your Stripe account for this transfer.", kind="invalid_request_error"
        )
    payout = {
        "id": f"po_{secrets.token_hex(12)}",
        "object": "payout",
        "amount": amount,
        "currency": currency,
        "status": "pending",
        "method": "standard",
        "arrival_date": int(time.time()) + 86400,
        "failure_code": None,
        "failure_message": None,
        "metadata": _metadata(form),
        "created": int(time.time()),
    }
    _credit(state, account, currency, -amount)
    _book(state, account, "payout", -amount, currency, payout["id"])
    state.payouts[payout["id"]] = {**payout, "_account": account}
    return 200, payout


def _handler(state: StripeState) -> type[BaseHTTPRequestHandler]:
    creates = {
        "/v1/checkout/sessions": lambda form: (200, _session(state, form)),
        "/v1/payment_intents": lambda form: (200, stored_intent(state, form)),
        "/v1/refunds": lambda form: _refund(state, form),
        "/v1/customers": lambda form: (200, {"id": f"cus_{secrets.token_hex(8)}", "object": "customer"}),
        "/v1/subscriptions": lambda form: (200, _subscription(form)),
        "/v1/accounts": lambda form: _account(state, form),
        "/v1/account_links": lambda form: _account_link(state, form),
        "/v1/transfers": lambda form: _transfer(state, form),
    }
    readable = {
        "/v1/payment_intents/": state.intents,
        "/v1/checkout/sessions/": state.sessions,
        "/v1/accounts/": state.accounts,
        "/v1/transfers/": state.transfers,
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urlsplit(self.path)
            query = parse_qsl(url.query)
            account = self.headers.get("Stripe-Account")
            with state.lock:
                state.requests.append(("GET", url.path, None))
                state.calls.append(Call("GET", url.path, query, None, account))
            if url.path.startswith("/v1/customers"):
                return self._answer(200, {"object": "list", "data": []})
            with state.lock:
                if url.path == "/v1/balance":
                    return self._answer(200, _balance(state, account))
                if (page := _list(state, url.path, query, account)) is not None:
                    return self._answer(200, page)
                for prefix, objects in readable.items():
                    if url.path.startswith(prefix) and (found := objects.get(url.path[len(prefix) :])) is not None:
                        body = dict(found)
                        if ("expand[]", "latest_charge") in query and body.get("latest_charge"):
                            body["latest_charge"] = dict(state.charges[body["latest_charge"]])
                        return self._answer(200, body)
                if url.path.startswith("/v1/payouts/"):
                    payout = state.payouts.get(url.path.rsplit("/", 1)[-1])
                    if payout is not None and payout["_account"] == account:
                        return self._answer(200, {k: v for k, v in payout.items() if k != "_account"})
            return self._answer(404, {"error": {"type": "invalid_request_error", "message": "No such object"}})

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            pairs = parse_qsl(raw)
            form = dict(pairs)
            self.cleared = {name for name, value in parse_qsl(raw, keep_blank_values=True) if value == ""}
            key = self.headers.get("Idempotency-Key")
            account = self.headers.get("Stripe-Account")
            with state.lock:
                state.requests.append(("POST", self.path, key))
                state.calls.append(Call("POST", self.path, pairs, key, account))
            if state.hold is not None:
                state.held.set()
                state.hold.wait(30)
            parameters = (self.path, tuple(sorted(pairs)))
            with state.lock:
                seen = state.answers.get((account, key)) if key is not None else None
                if seen is not None:  # Stripe replays the first answer of a key, for the same request only
                    status, body = seen[:2]
                    if seen[3] != parameters:
                        status, body = _refused(
                            f"Keys for idempotent requests can only be used with the same parameters they were "
                            f"first used with. Try using a key other than '{key}' if you meant to execute a "
                            "different request.",
                            kind="idempotency_error",
                        )
                    return self._answer(status, body)
                if state.fail_next:
                    status, body = state.fail_next.pop(0), {"error": {"type": "api_error", "message": "Boom"}}
                    return self._answer(status, body)
                status, body = self._execute(form, account)
                if key is not None and status < 500:
                    state.answers[(account, key)] = (status, body, self.path, parameters)
            return self._answer(status, body)

        def _execute(self, form: dict[str, str], account: str | None) -> tuple[int, dict]:
            path = self.path
            if path.startswith("/v1/payment_intents/"):  # .../cancel or .../capture
                return _intent_action(state, path, form)
            if path.startswith("/v1/transfers/") and path.endswith("/reversals"):
                return _reversal(state, path, form)
            if path == "/v1/payouts":
                return _payout(state, form, account)
            if path.startswith("/v1/subscriptions/"):  # an update: cancel_at_period_end and/or pause_collection
                subscription = state.subscriptions.get(path.rsplit("/", 1)[-1])
                if subscription is None:
                    return 404, {"error": {"message": "No such subscription"}}
                if "cancel_at_period_end" in form:
                    subscription["cancel_at_period_end"] = form["cancel_at_period_end"] == "true"
                if "pause_collection[behavior]" in form:
                    behavior = form["pause_collection[behavior]"]
                    if behavior not in ("keep_as_draft", "mark_uncollectible", "void"):
                        return _refused(f"Invalid pause_collection[behavior]: {behavior!r}")
                    subscription["pause_collection"] = {"behavior": behavior, "resumes_at": None}
                elif "pause_collection" in self.cleared:  # an empty value unsets it, as Stripe does
                    subscription["pause_collection"] = None
                return 200, dict(subscription)
            if path in creates:
                status, body = creates[path](form)
                if path == "/v1/subscriptions" and status == 200:
                    state.subscriptions[body["id"]] = dict(body)
                return status, body
            return 404, {"error": {"message": "Unknown path"}}

        def _answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


@contextmanager
def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """As tests.support.servers.serve_http, polling for shutdown every 50 ms rather than 500: every test
    that uses the stand-in stops it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def stripe_stand_in(settings) -> Iterator[StripeState]:
    """Point the Stripe adapter (PAYMENTS_PROVIDER=stripe) at a fresh stand-in for the test."""
    state = StripeState()
    with _serve(_handler(state)) as server:
        settings.PAYMENTS_PROVIDER = "stripe"
        settings.STRIPE_API_KEY = "sk_test_stand_in"
        settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
        settings.STRIPE_PRICE_IDS = {"starter": "price_starter", "growth": "price_growth", "scale": "price_scale"}
        yield state
