"""Every route has an explicit authorization rule, and behaves by it (docs/decisions.md#identity-and-authentication)."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ImproperlyConfigured

from core.api.permissions import required_permission
from core.api.views import ApiView
from core.http.access import API_KEY_PREFIXES, Access
from tests.access import all_routes
from tests.conftest import HttpsAPIClient, client_with_token, jwt_for
from tests.support.factories import UserFactory
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


# Staff endpoints: each needs a named Django permission besides is_staff (docs/decisions.md#staff-permissions).
STAFF_ROUTES = sorted(r for r, a in TABLE.items() if a is Access.STAFF)


def _permission_of(route: str) -> str | None:
    return required_permission(ROUTES[route], route.split(" ", 1)[0])


@pytest.mark.django_db
@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_every_staff_route_names_the_permission_it_needs(route):
    app_label, _, codename = (_permission_of(route) or "").partition(".")

    assert Permission.objects.filter(content_type__app_label=app_label, codename=codename).exists(), route


def test_the_staff_routes_need_these_permissions():
    assert {route: _permission_of(route) for route in STAFF_ROUTES} == {
        "GET /api/v1/admin/scrapers/scraperprovider/snapshots": "scrapers.view_snapshot",
        "POST /api/v1/admin/scrapers/scraperprovider/snapshots": "scrapers.add_snapshot",
        "GET /api/v1/admin/scrapers/scraperprovider/snapshots/{snapshot_id}": "scrapers.view_snapshot",
        "POST /api/v1/disputes/{task_id}/resolve": "tasks_market.add_disputeresolution",
    }


def test_a_staff_view_without_a_permission_for_a_method_is_refused_at_import():
    with pytest.raises(ImproperlyConfigured, match="no required_permission for post"):

        class Unnamed(ApiView):
            access = Access.STAFF
            required_permission = {"GET": "scrapers.view_snapshot"}

            def get(self, request): ...

            def post(self, request): ...


@pytest.mark.django_db
@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_staff_without_the_permission_is_403(route):
    others = [p for p in {_permission_of(r) for r in STAFF_ROUTES} if p != _permission_of(route)]
    staff = UserFactory(is_staff=True, permissions=others)  # every other staff permission, not this one

    response = _request(client_with_token(jwt_for(staff)), route)

    assert response.status_code == 403, response.content
    assert response.json() == {
        "detail": f"This action needs the {_permission_of(route)} permission.",
        "code": "permission_denied",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_staff_with_the_permission_get_past_the_access_checks(route):
    staff = UserFactory(is_staff=True, permissions=[_permission_of(route)])

    response = _request(client_with_token(jwt_for(staff)), route)

    assert response.status_code not in (401, 403), response.content


@pytest.mark.django_db
@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_the_permission_without_is_staff_is_403(route):
    user = UserFactory(permissions=[_permission_of(route)])

    response = _request(client_with_token(jwt_for(user)), route)

    assert response.status_code == 403, response.content
    assert response.json()["code"] == "permission_denied"
