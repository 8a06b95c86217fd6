"""Content-Security-Policy per kind of page, on top of django-csp (see docs/decisions.md#content-security-policy)."""

from __future__ import annotations

import http.client
from collections.abc import Callable

from csp.constants import HEADER, HEADER_REPORT_ONLY, NONCE
from csp.decorators import csp
from csp.middleware import CheckableLazyObject, PolicyParts
from csp.middleware import CSPMiddleware as _CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase

_JSON = ("application/json", "application/problem+json", "application/vnd.oai.openapi+json")
_DEBUG_EXEMPT = (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND)
_HEADERS = (
    (False, HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
    (True, HEADER_REPORT_ONLY, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY"),
)
# Header values that depend on settings alone (no nonce, no per-view changes), built once per process:
# the policy of every JSON answer is the same string (docs/decisions.md#content-security-policy).
_built: dict[tuple, object] = {}


@receiver(setting_changed)
def _forget_built(*, setting: str, **kwargs) -> None:
    if setting.startswith(("CSP_", "CONTENT_SECURITY_POLICY")):
        _built.clear()


def _policy(name: str) -> dict[str, list[str]]:
    """A named policy from settings, the "'nonce'" placeholder turned into django-csp's NONCE."""
    return {
        key: [NONCE if v == "'nonce'" else v for v in values]
        for key, values in settings.CSP_PAGE_POLICIES[name].items()
    }


def _api_policy() -> dict[str, list[str]]:
    policy = _built.get("api")
    if policy is None:
        policy = _built["api"] = _policy("api")
    return policy


def page_policy(name: str) -> Callable:
    """The view decorator that gives a page its own whole policy (settings.CSP_PAGE_POLICIES[name])."""
    return csp(_policy(name))


class CSPMiddleware(_CSPMiddleware):
    """django-csp's middleware; a JSON answer whose view chose no policy gets the strict API one.

    The same headers as django-csp's own process_response, with the values that depend on settings alone
    (the API policy, the site-wide ones) built once instead of on every response."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and parts.config is None and response.get("Content-Type", "").startswith(_JSON):
            parts.config = _api_policy()
        return parts

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if response.status_code in _DEBUG_EXEMPT and settings.DEBUG:
            return response
        for report_only, header, exempt, setting in _HEADERS:
            parts = self.get_policy_parts(request=request, response=response, report_only=report_only)
            value = _header_value(parts, report_only)
            if not value or getattr(response, exempt, False) is not False or header in response:
                continue
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES", None) or ()
            if not request.path_info.startswith(tuple(prefixes)):
                response[header] = value
        # As django-csp: once the header is written, reading request.csp_nonce is an error.
        if getattr(request, "_csp_nonce", None) is None:
            request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


def _header_value(parts: PolicyParts, report_only: bool) -> str:
    if parts.update is not None or parts.replace is not None or parts.nonce is not None:
        return build_policy(parts.config, parts.update, parts.replace, parts.nonce, report_only)
    if parts.config is None:
        key = ("settings", report_only)
    elif parts.config is _built.get("api"):
        key = ("api", report_only)
    else:
        return build_policy(parts.config, None, None, None, report_only)
    value = _built.get(key)
    if value is None:
        value = _built[key] = build_policy(parts.config, None, None, None, report_only)
    return value
