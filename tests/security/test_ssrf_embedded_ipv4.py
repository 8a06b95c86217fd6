"""Every IPv6 form that embeds an IPv4 address is judged by that IPv4 address (core/http/outbound.py),
including SIIT's IPv4-translated range `::ffff:0:0:0/96`, which Python's `is_global` calls global."""

from __future__ import annotations

import pytest

from core.http.outbound import UnsafeURL, address_allowed, check_url

pytestmark = pytest.mark.django_db

# (form, the IPv4 address it embeds): each is tried with loopback, the metadata address, a private
# and a public address inside.
FORMS = {
    "IPv4-mapped ::ffff:0:0/96": "::ffff:{v4}",
    "SIIT IPv4-translated ::ffff:0:0:0/96": "::ffff:0:{v4}",
    "NAT64 64:ff9b::/96": "64:ff9b::{v4}",
    "IPv4-compatible ::/96": "::{v4}",
}
NOT_GLOBAL = ["127.0.0.1", "169.254.169.254", "10.0.0.1", "192.168.1.1", "100.64.0.1", "0.0.0.0"]
GLOBAL = "93.184.215.14"


def _hex(v4: str) -> str:
    a, b, c, d = (int(part) for part in v4.split("."))
    return f"{(a << 8) | b:x}:{(c << 8) | d:x}"


@pytest.mark.parametrize("inner", NOT_GLOBAL)
@pytest.mark.parametrize("form", FORMS)
def test_a_form_embedding_a_non_global_ipv4_is_refused(form, inner):
    for spelled in (FORMS[form].format(v4=inner), FORMS[form].format(v4=_hex(inner))):
        assert address_allowed(spelled) is False, spelled


@pytest.mark.parametrize("form", [f for f in FORMS if not f.startswith("IPv4-compatible")])
def test_a_form_embedding_a_global_ipv4_is_judged_by_it(form):
    assert address_allowed(FORMS[form].format(v4=GLOBAL)) is True


@pytest.mark.parametrize(
    "address",
    [
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe:1:2:3:4:5",  # 6to4 of the metadata address
        "2001:0:7f00:1::1",  # Teredo whose server is 127.0.0.1
        "2001:0:5db8:d70e:0:ffff:80ff:fffe",  # Teredo whose client (inverted) is 127.0.0.1
        "64:ff9b:1::7f00:1",  # local-use NAT64: the embedded position varies by prefix, refused outright
        "64:ff9b:1:5db8:d7:e00::",  # same prefix, a public IPv4 at the /56 position: still refused
    ],
)
def test_other_transition_forms_of_non_global_addresses_are_refused(address):
    assert address_allowed(address) is False


@pytest.mark.parametrize(
    "url",
    [
        "https://[::ffff:0:127.0.0.1]/",
        "https://[::ffff:0:7f00:1]/",
        "https://[::ffff:0:169.254.169.254]/latest/meta-data/",
        "https://[::ffff:0:10.0.0.1]:8443/",
    ],
)
def test_the_outbound_url_check_refuses_siit_forms_of_internal_addresses(settings, url):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    with pytest.raises(UnsafeURL):
        check_url(url)


def test_a_webhook_subscription_to_a_siit_loopback_is_a_422(alice_api, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    response = alice_api.post(
        "/api/v1/webhooks/subscriptions",
        {"url": "https://[::ffff:0:127.0.0.1]/hook", "events": ["task.created"]},
        format="json",
    )

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == ["body", "url"]
