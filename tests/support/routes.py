"""The project's URL routes as (METHOD, "/path/{param}") pairs, read from the URL resolver."""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver

from core.api.views import ApiView

_HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")


def _walk(patterns, prefix=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route, entry


def api_routes() -> dict[str, type[ApiView]]:
    """{"METHOD /path/{param}": view_class} for every route served by one of our API views."""
    routes = {}
    for route, pattern in _walk(get_resolver().url_patterns):
        view_class = getattr(pattern.callback, "view_class", None)
        if view_class is None or not issubclass(view_class, ApiView):
            continue
        template = "/" + _PARAM.sub(lambda m: "{" + m.group("name") + "}", route)
        for method in _HTTP_METHODS:
            if hasattr(view_class, method):
                routes[f"{method.upper()} {template}"] = view_class
    return routes


def path_converters() -> dict[str, str]:
    """{"/path/{param}": {"param": converter}} so tests can fill parameters with valid values."""
    result = {}
    for route, _pattern in _walk(get_resolver().url_patterns):
        template = "/" + _PARAM.sub(lambda m: "{" + m.group("name") + "}", route)
        result[template] = {m.group("name"): m.group("converter") or "str" for m in _PARAM.finditer(route)}
    return result
