"""Staff see card chargebacks in the admin (docs/payouts.md#chargebacks): filtered by status, found by
payment or dispute id, with the disputed payment's earning; read-only."""

from __future__ import annotations

import pytest

from payments.models import Chargeback
from tests.payments.payouts.test_chargebacks import chargeback, released

pytestmark = pytest.mark.django_db


def test_chargebacks_are_listed_searched_and_shown_read_only(alice_api, seller_api, seller, api, admin_client):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "needs_response", dispute_id="dp_frozen")
    Chargeback.objects.create(id="dp_early", payment_ref="pi_not_released", status=Chargeback.Status.LOST)

    listed = admin_client.get("/admin/payments/chargeback/", secure=True)
    open_only = admin_client.get("/admin/payments/chargeback/?status__exact=open", secure=True)
    by_payment = admin_client.get(f"/admin/payments/chargeback/?q={earning.payment_ref}", secure=True)
    by_dispute = admin_client.get("/admin/payments/chargeback/?q=dp_early", secure=True)
    page = admin_client.get("/admin/payments/chargeback/dp_frozen/change/", secure=True)

    assert all(r.status_code == 200 for r in (listed, open_only, by_payment, by_dispute, page))
    html = listed.content.decode()
    assert "dp_frozen" in html and "dp_early" in html and earning.source in html and seller.email in html
    assert "(nothing released yet)" in html
    assert "dp_early" not in open_only.content.decode() and "dp_frozen" in open_only.content.decode()
    assert "dp_frozen" in by_payment.content.decode() and "dp_early" not in by_payment.content.decode()
    assert "dp_early" in by_dispute.content.decode() and "dp_frozen" not in by_dispute.content.decode()
    detail = page.content.decode()
    assert earning.source in detail and "frozen" in detail
    assert 'name="_save"' not in detail  # read-only: money moves through the services


def test_the_chargeback_list_is_one_query_however_many_rows(admin_client, django_assert_max_num_queries):
    Chargeback.objects.bulk_create(Chargeback(id=f"dp_{n}", payment_ref=f"pi_{n}") for n in range(30))

    with django_assert_max_num_queries(12):
        assert admin_client.get("/admin/payments/chargeback/", secure=True).status_code == 200
