"""CREDIT_PACKS: the settings parse it into records (config.settings.env.env_records, importing no app), and
the assistant, which sells the packs, refuses at start-up any it cannot sell."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured

from assistant.domain.credit_packs import credit_pack_problems
from config.settings.env import env_records
from tests.support.settings_probe import ROOT

FIELDS = (("id", str), ("credits", int), ("price", Decimal), ("currency", str.lower))


def test_the_records_are_the_packs_as_the_assistant_sells_them(monkeypatch):
    monkeypatch.setenv("PACKS_PROBE", " small:20:5.00:USD , large:500:80.00:eur,")

    assert env_records("PACKS_PROBE", FIELDS, default="") == [
        {"id": "small", "credits": 20, "price": Decimal("5.00"), "currency": "usd"},
        {"id": "large", "credits": 500, "price": Decimal("80.00"), "currency": "eur"},
    ]


@pytest.mark.parametrize("raw", ["small:20:5.00", "small:x:5.00:usd", "small:20:five:usd", "a:1:1.00:usd:extra"])
def test_a_malformed_record_is_refused_with_its_text(monkeypatch, raw):
    monkeypatch.setenv("PACKS_PROBE", raw)

    with pytest.raises(ImproperlyConfigured, match="is not id:credits:price:currency"):
        env_records("PACKS_PROBE", FIELDS, default="")


@pytest.mark.parametrize(
    "pack",
    [
        {"id": "a", "credits": 0, "price": Decimal("1.00"), "currency": "usd"},
        {"id": "a", "credits": 1, "price": Decimal("0"), "currency": "usd"},
        {"id": "a", "credits": 1, "price": Decimal("1.001"), "currency": "usd"},
        {"id": "a", "credits": 1, "price": Decimal("NaN"), "currency": "usd"},
        {"id": "a", "credits": 1, "price": Decimal("Infinity"), "currency": "usd"},
        {"id": "a", "credits": 1, "price": Decimal("1.00"), "currency": "us"},
        {"id": "a b", "credits": 1, "price": Decimal("1.00"), "currency": "usd"},
    ],
)
def test_a_pack_that_cannot_be_sold_is_a_problem(pack):
    assert credit_pack_problems([pack], name="CREDIT_PACKS") == [
        f"CREDIT_PACKS: {pack['id']!r} needs a unique id, credits > 0, a price > 0 and a currency"
    ]


def test_two_packs_with_one_id_are_a_problem_and_good_packs_are_none():
    good = {"id": "small", "credits": 20, "price": Decimal("5.00"), "currency": "usd"}

    assert credit_pack_problems([good], name="CREDIT_PACKS") == []
    assert len(credit_pack_problems([good, good], name="CREDIT_PACKS")) == 1


def test_a_process_with_a_pack_it_cannot_sell_does_not_start():
    env = {**os.environ, "CREDIT_PACKS": "free:10:0.00:usd"}
    started = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert started.returncode != 0
    assert "CREDIT_PACKS: 'free' needs a unique id, credits > 0, a price > 0 and a currency" in started.stderr
