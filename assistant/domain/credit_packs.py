"""The credit packs on sale (POST /api/v1/allmodelchat/credits/top-up), written as `id:credits:price:currency`
items, comma-separated, e.g. `small:20:5.00:usd`. Parsed once, when the settings load, so a typo stops the
process at start-up instead of surfacing at the first top-up."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ImproperlyConfigured


def credit_packs_parse(raw: str, *, name: str) -> list[dict]:
    packs, seen = [], set()
    for item in filter(None, (part.strip() for part in raw.split(","))):
        try:
            pack_id, credits, price, currency = (part.strip() for part in item.split(":"))
            pack = {"id": pack_id, "credits": int(credits), "price": Decimal(price), "currency": currency.lower()}
        except (ValueError, InvalidOperation) as exc:
            raise ImproperlyConfigured(f"{name}: {item!r} is not id:credits:price:currency") from exc
        valid = (
            pack_id.replace("-", "").replace("_", "").isalnum()
            and pack_id not in seen
            and pack["credits"] > 0
            and pack["price"] > 0
            and pack["price"] == pack["price"].quantize(Decimal("0.01"))
            and len(pack["currency"]) == 3
            and pack["currency"].isalpha()
        )
        if not valid:
            raise ImproperlyConfigured(f"{name}: {item!r} needs a unique id, credits > 0, a price > 0 and a currency")
        seen.add(pack_id)
        packs.append(pack)
    return packs
