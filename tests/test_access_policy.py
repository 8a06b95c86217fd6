"""Every route has an explicit authorization rule, and behaves by it (docs/decisions.md#identity-and-authentication)."""

from __future__ import annotations

import uuid

import pytest

from core.access import API_KEY_PREFIXES, Access
from tests.access import all_routes
from tests.conftest import HttpsAPIClient
from tests.support.routes import api_routes, path_converters

TABLE = all_routes()
ROUTES = api_routes()


def test_every_route_has_a_rule_and_every_rule_a_route():
    assert sorted(set(ROUTES) - set(TABLE)) == [], "routes without an access rule in tests/access/"
    assert sorted(set(TABLE) - set(ROUTES)) == [], "access rules for routes that do not exist"


@pytest.mark.parametrize("route", sorted(TABLE))
def test_view_declares_the_tabled_access(route):
    assert ROUTES[route].access is TABLE[route]


@pytest.mark.parametrize("route", sorted(TABLE))
def test_api_keys_only_where_the_contract_allows_them(route):
    path = route.split(" ", 1)[1]
    under_key_prefix = path.startswith(API_KEY_PREFIXES)
    if TABLE[route] is Access.USER_OR_KEY:
        assert under_key_prefix, f"{route} accepts API keys outside the contract's prefixes"
    elif TABLE[route] is not Access.PUBLIC:
        assert not under_key_prefix, f"{route} refuses API keys on a prefix where they must work"


def _request(client, route: str):
    method, template = route.split(" ", 1)
    params = path_converters()[template]
    path = template
    for name, converter in params.items():
        path = path.replace("{" + name + "}", str(uuid.uuid4()) if converter == "uid" else "x")
    return getattr(client, method.lower())(path, {}, format="json")


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(r for r, a in TABLE.items() if a is not Access.PUBLIC))
def test_anonymous_is_401(route):
    response = _request(HttpsAPIClient(), route)

    assert response.status_code == 401, response.content
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(r for r, a in TABLE.items() if a in (Access.USER, Access.STAFF)))
def test_api_key_is_refused_where_not_allowed(route, alice_key_api):
    response = _request(alice_key_api, route)

    assert response.status_code == 403, response.content
    assert response.json()["code"] == "api_key_not_allowed"


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(r for r, a in TABLE.items() if a is Access.USER_OR_KEY))
def test_api_key_is_accepted_where_allowed(route, alice_key_api):
    response = _request(alice_key_api, route)

    assert response.status_code not in (401, 403), response.content


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(r for r, a in TABLE.items() if a is Access.STAFF))
def test_non_staff_user_is_403(route, alice_api):
    response = _request(alice_api, route)

    assert response.status_code == 403, response.content
    assert response.json()["code"] == "permission_denied"
