"""The credit packs on sale (POST /api/v1/allmodelchat/credits/top-up): the settings parse CREDIT_PACKS
(`id:credits:price:currency` items, comma-separated, e.g. `small:20:5.00:usd`) into records, and
AssistantConfig.ready() refuses packs that cannot be sold, so a typo stops the process at start-up instead of
surfacing at the first top-up."""

from __future__ import annotations

from decimal import Decimal


def credit_pack_problems(packs: list[dict], *, name: str) -> list[str]:
    """What is wrong with each pack, one line each; empty when all can be sold."""
    problems, seen = [], set()
    for pack in packs:
        pack_id, price, currency = pack["id"], pack["price"], pack["currency"]
        valid = (
            pack_id.replace("-", "").replace("_", "").isalnum()
            and pack_id not in seen
            and pack["credits"] > 0
            and price.is_finite()
            and price > 0
            and price == price.quantize(Decimal("0.01"))
            and len(currency) == 3
            and currency.isalpha()
        )
        if not valid:
            problems.append(f"{name}: {pack_id!r} needs a unique id, credits > 0, a price > 0 and a currency")
        seen.add(pack_id)
    return problems
