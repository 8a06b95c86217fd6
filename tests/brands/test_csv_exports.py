"""CSV exports (docs/decisions.md#csv-exports): the competitors roster, a brand's publications and a simulation
answer `Accept: text/csv` with a header row and one row per item, as a download; errors stay JSON; a cell a
spreadsheet would run as a formula is written after an apostrophe."""

from __future__ import annotations

import csv
import io
import uuid

import pytest

from core.api.renderers import csv_bytes, csv_cell
from tests.brands.factories import BrandFactory, CompetitorSeedFactory
from tests.brands.test_publications_api import body

pytestmark = pytest.mark.django_db

CSV = {"HTTP_ACCEPT": "text/csv"}


def table(response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "Accept" in response["Vary"]
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, domain="acme.example")


def test_the_competitors_roster_as_csv_is_the_json_roster_row_for_row(alice_api, brand):
    CompetitorSeedFactory(name="Globex", target_domain="acme.example", canonical_domain="globex.example")
    CompetitorSeedFactory(name='=HYPERLINK("http://evil.example")', target_domain="acme.example")
    url = f"/api/v1/brands/{brand.id}/competitors"

    as_json = alice_api.get(url).json()
    response = alice_api.get(url, **CSV)
    rows = table(response)

    assert response["Content-Disposition"] == 'attachment; filename="competitors.csv"'
    assert [row["id"] for row in rows] == [item["id"] for item in as_json]
    names = {row["name"] for row in rows}
    assert "Globex" in names and '\'=HYPERLINK("http://evil.example")' in names  # shown, never run


def test_the_publications_page_as_csv_keeps_the_paging_link(alice_api, brand):
    for _ in range(3):
        created = alice_api.post(f"/api/v1/brands/{brand.id}/publications", body(creative_id=str(uuid.uuid4())))
        assert created.status_code == 201, created.content

    response = alice_api.get(f"/api/v1/brands/{brand.id}/publications", {"limit": 2}, **CSV)
    rows = table(response)

    assert len(rows) == 2 and set(rows[0]) >= {"id", "platform", "status", "payload_hash"}
    assert 'rel="next"' in response["Link"]


def test_a_simulation_as_csv_is_its_baseline_then_one_row_per_scenario(alice_api):
    body = {
        "platform": "google",
        "current_daily_budget": 100,
        "current_metrics": {"cpc": 2, "ctr": 0.05, "conversion_rate": 0.1, "avg_order_value": 50},
        "budget_scenarios": [50, 100, 200],
    }

    as_json = alice_api.post("/api/v1/ads/simulate", body).json()
    rows = table(alice_api.post("/api/v1/ads/simulate", body, **CSV))

    assert [row["row"] for row in rows] == ["baseline", "scenario", "scenario", "scenario"]
    assert [float(row["daily_budget"]) for row in rows] == [100, 50, 100, 200]
    assert [float(row["estimated_revenue"]) for row in rows[1:]] == [
        s["estimated_revenue"] for s in as_json["scenarios"]
    ]
    assert {row["platform"] for row in rows} == {"google"}


def test_an_error_asked_for_as_csv_is_json_in_the_contracts_shape(alice_api, brand):
    not_found = alice_api.get(f"/api/v1/brands/{uuid.uuid4()}/competitors", **CSV)
    invalid = alice_api.post("/api/v1/ads/simulate", {"platform": "google"}, **CSV)

    assert (not_found.status_code, not_found["Content-Type"]) == (404, "application/json")
    assert not_found.json()["code"] == "not_found"
    assert (invalid.status_code, invalid["Content-Type"]) == (422, "application/json")
    assert "Content-Disposition" not in invalid


def test_csv_is_offered_only_where_a_view_exports(alice_api, brand):
    """A list without an export, and the competitors' POST beside their exported GET, cannot answer CSV."""
    listing = alice_api.get("/api/v1/brands", **CSV)
    creating = alice_api.post(f"/api/v1/brands/{brand.id}/competitors", {"name": "Initech"}, **CSV)

    assert (listing.status_code, listing["Content-Type"]) == (406, "application/json")
    assert (creating.status_code, creating["Content-Type"]) == (406, "application/json")


def test_a_cell_is_text_a_spreadsheet_shows_and_never_runs():
    written = {
        "none": (None, ""),
        "boolean": (True, "true"),
        "number": (1.5, "1.5"),
        "negative number": (-50.25, "-50.25"),  # a number, not a formula: no apostrophe
        "nested": ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
        "formula": ("=1+1", "'=1+1"),
        "plus": ("+1", "'+1"),
        "minus": ("-1", "'-1"),
        "at": ("@SUM(A1)", "'@SUM(A1)"),
        "tab": ("\tx", "'\tx"),
        "plain": ("plain", "plain"),
    }

    assert {name: csv_cell(value) for name, (value, _) in written.items()} == {
        name: cell for name, (_, cell) in written.items()
    }


def test_an_empty_export_still_has_its_header_row():
    assert csv_bytes(["id", "name"], []) == b"id,name\r\n"
