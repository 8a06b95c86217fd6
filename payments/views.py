"""The hosted checkout pages of the local payment provider: public, HTML, outside /api/v1.

The unguessable session id in the path is the capability (no login). Pages are never cached, and the
Referrer-Policy (same-origin) keeps the id from leaking to the success/cancel sites.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from core.http.errors import NotFound, ProviderError
from payments.checkout import CheckoutState, Choice, checkout_complete, checkout_page
from payments.onboarding import OnboardingInvalid, bank_account_parse, onboarding_complete, onboarding_page

# A used session is a conflict with what happened already; an expired or cancelled one is gone.
_STATUS = {CheckoutState.OPEN: 200, CheckoutState.USED: 409, CheckoutState.EXPIRED: 410, CheckoutState.CANCELLED: 410}


def _not_found(request: HttpRequest) -> HttpResponse:
    return render(request, "checkout/missing.html", status=404)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def checkout(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        if request.method != "POST":
            page = checkout_page(session_id=session_id)
            return render(request, "checkout/page.html", {"page": page}, status=_STATUS[page.state])
        choice = request.POST.get("choice", "")
        if choice not in Choice.ALL:
            page = checkout_page(session_id=session_id)
            context = {"page": page, "error": "Choose Pay or Decline."}
            return render(request, "checkout/page.html", context, status=400)
        result = checkout_complete(session_id=session_id, choice=choice)
    except NotFound:
        return _not_found(request)
    if not result.applied:
        page = result.page
        return render(request, "checkout/page.html", {"page": page}, status=_STATUS[page.state])
    context = {"page": result.page, "choice": choice, "paid": choice == Choice.PAY, "delivered": result.delivered}
    return render(request, "checkout/done.html", context)


_ONBOARDING_STATUS = {"open": 200, "used": 409, "expired": 410}


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def payout_onboarding(request: HttpRequest, link_id: str) -> HttpResponse:
    """The local provider's hosted payout onboarding (payments.onboarding); the link id is the capability."""
    form = {
        name: request.POST.get(name, "")[:200] for name in ("display_name", "iban", "routing_number", "account_number")
    }
    try:
        page = onboarding_page(link_id=link_id)
        if request.method != "POST" or page.state != "open":
            return render(
                request, "onboarding/page.html", {"page": page, "form": form}, status=_ONBOARDING_STATUS[page.state]
            )
        try:
            bank_account = bank_account_parse(
                iban=form["iban"], routing_number=form["routing_number"], account_number=form["account_number"]
            )
            page = onboarding_complete(link_id=link_id, display_name=form["display_name"], bank_account=bank_account)
        except OnboardingInvalid as exc:
            return render(request, "onboarding/page.html", {"page": page, "form": form, "error": str(exc)}, status=400)
        except ProviderError:  # used or expired meanwhile
            page = onboarding_page(link_id=link_id)
            return render(
                request, "onboarding/page.html", {"page": page, "form": form}, status=_ONBOARDING_STATUS[page.state]
            )
    except NotFound:
        return _not_found(request)
    return render(request, "onboarding/page.html", {"page": page, "form": form})
