"""Addresses are kept as given and mailed with an IDNA 2008 domain; accounts are told apart by a key (the local
part NFKC + casefold, the domain IDNA 2008), so `faß.de` and `fass.de` are two domains and two accounts
(docs/decisions.md#identity-and-authentication)."""

from __future__ import annotations

import pytest

from accounts.addresses import domain_problem, mailing_address, normalise_email
from accounts.models import User
from tests.support.factories import UserFactory

PASSWORD = "correct horse battery"


def login(api, email: str, password: str = PASSWORD):
    return api.post("/api/v1/auth/token", {"email": email, "password": password})


@pytest.mark.parametrize(
    ("given", "key", "mailed"),
    [
        ("Ann@Faß.de", "ann@xn--fa-hia.de", "Ann@xn--fa-hia.de"),
        ("ANN@FASS.DE", "ann@fass.de", "ANN@fass.de"),
        ("  Ann@xn--fa-hia.de ", "ann@xn--fa-hia.de", "Ann@xn--fa-hia.de"),
        ("STRAßE@Bücher.example", "strasse@xn--bcher-kva.example", "STRAßE@xn--bcher-kva.example"),
        ("\u017fam@EXAMPLE.com", "sam@example.com", "\u017fam@example.com"),  # long s: NFKC makes it "s"
        ("al\u0131ce@example.com", "al\u0131ce@example.com", "al\u0131ce@example.com"),  # dotless i stays
        ("x@\uff25xample.com", "x@example.com", "x@example.com"),  # full-width letters are mapped by UTS 46
    ],
)
def test_the_key_and_the_mailing_address(given, key, mailed):
    assert normalise_email(given) == key
    assert mailing_address(given) == mailed


def test_a_domain_idna_2008_refuses_has_a_problem_and_a_key_of_its_own():
    assert domain_problem("x@\u2603.net") == "The domain is not a valid internationalised domain name (IDNA 2008)."
    assert domain_problem("x@faß.de") is None
    assert normalise_email("X@\u2603.NET") == "x@\u2603.net"


@pytest.mark.django_db
def test_an_idn_address_is_kept_as_given_mailed_by_idna_2008_and_logged_in_by_its_key(
    api, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/auth/register", {"email": "Ann@Faß.de", "password": PASSWORD})

    assert response.status_code == 201, response.content
    assert response.json()["email"] == "Ann@Faß.de"
    user = User.objects.get(pk=response.json()["id"])
    assert (user.email, user.email_key) == ("Ann@Faß.de", "ann@xn--fa-hia.de")
    [mail] = mailoutbox
    assert mail.to == ["Ann@xn--fa-hia.de"]
    assert mail.message()["To"] == "Ann@xn--fa-hia.de"  # not Django's IDNA 2003 "fass.de"
    for spelling in ("ann@faß.de", "ANN@FAß.DE", "ann@xn--fa-hia.de", "Ann@XN--FA-HIA.DE"):
        assert login(api, spelling).status_code == 200, spelling
    assert login(api, "ann@fass.de").status_code == 401  # another domain, no account


@pytest.mark.django_db
def test_fass_de_and_fass_with_sharp_s_are_two_accounts_and_each_is_taken_in_any_spelling(api):
    first = api.post("/api/v1/auth/register", {"email": "ann@faß.de", "password": PASSWORD})
    second = api.post("/api/v1/auth/register", {"email": "Ann@FASS.de", "password": "another long passphrase"})
    taken = api.post("/api/v1/auth/register", {"email": "ANN@xn--fa-hia.de", "password": PASSWORD})

    assert (first.status_code, second.status_code) == (201, 201)
    assert taken.status_code == 409 and taken.json()["code"] == "email_taken"
    assert login(api, "ann@fass.de", "another long passphrase").json()["access"]
    assert login(api, "ann@fass.de").status_code == 401  # the sharp-s account's password is not this one's


@pytest.mark.django_db
def test_a_domain_idna_2008_refuses_is_a_422_at_the_email(api, alice_api):
    registered = api.post("/api/v1/auth/register", {"email": "x@\u2603.net", "password": PASSWORD})
    changed = alice_api.patch("/api/v1/auth/me", {"email": "x@\u2603.net", "current_password": "a-long-test-password"})

    for response in (registered, changed):
        assert response.status_code == 422, response.content
        [problem] = response.json()["detail"]
        assert problem["loc"] == ["body", "email"] and "IDNA 2008" in problem["msg"]
    assert not User.objects.filter(email="x@\u2603.net").exists()


@pytest.mark.django_db
def test_the_reset_mail_goes_to_the_idna_2008_domain_and_only_for_its_key(
    api, mailoutbox, django_capture_on_commit_callbacks
):
    UserFactory(email="Ann@Faß.de")
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/api/v1/auth/password/reset", {"email": "ann@fass.de"})  # another address: no mail
        api.post("/api/v1/auth/password/reset", {"email": "ANN@faß.DE"})

    assert [m.to for m in mailoutbox] == [["Ann@xn--fa-hia.de"]]


@pytest.mark.django_db
def test_the_old_address_is_told_of_a_change_at_its_idna_2008_domain(
    alice, alice_api, mailoutbox, django_capture_on_commit_callbacks
):
    User.objects.filter(pk=alice.pk).update(email="Alice@Faß.de", email_key="alice@xn--fa-hia.de")
    with django_capture_on_commit_callbacks(execute=True):
        alice_api.patch("/api/v1/auth/me", {"email": "alice@example.com", "current_password": "a-long-test-password"})

    assert ["Alice@xn--fa-hia.de"] in [m.to for m in mailoutbox]


@pytest.mark.django_db
def test_a_user_saved_any_other_way_gets_its_key_and_keeps_its_spelling(api):
    user = User(email="  Mixed.Case@Faß.DE ")
    user.set_password(PASSWORD)
    user.save()
    user.email = "Other@Example.COM"
    user.save(update_fields=["email"])

    stored = User.objects.get(pk=user.pk)
    assert (stored.email, stored.email_key) == ("Other@Example.COM", "other@example.com")
    assert login(api, "other@example.com").status_code == 200
