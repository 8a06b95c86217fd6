"""Content-Security-Policy per kind of page, on top of django-csp (see docs/decisions.md#content-security-policy)."""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import NONCE
from csp.decorators import csp
from csp.middleware import CSPMiddleware as _CSPMiddleware
from csp.middleware import PolicyParts
from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase

_JSON = ("application/json", "application/problem+json", "application/vnd.oai.openapi+json")


def _policy(name: str) -> dict[str, list[str]]:
    """A named policy from settings, the "'nonce'" placeholder turned into django-csp's NONCE."""
    return {
        key: [NONCE if v == "'nonce'" else v for v in values]
        for key, values in settings.CSP_PAGE_POLICIES[name].items()
    }


def page_policy(name: str) -> Callable:
    """The view decorator that gives a page its own whole policy (settings.CSP_PAGE_POLICIES[name])."""
    return csp(_policy(name))


class CSPMiddleware(_CSPMiddleware):
    """django-csp's middleware; a JSON answer whose view chose no policy gets the strict API one."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and parts.config is None and response.get("Content-Type", "").startswith(_JSON):
            parts.config = _policy("api")
        return parts
