"""The research status of a brand: six items in the order of docs/decisions.md#domain-rules, plus social readiness."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from brands.models import Brand, BrandKit, ResearchModule, ResearchStatus


def research_status(brand: Brand) -> dict[str, Any]:
    """`social_readiness.state`: `pending` while no kit of the brand is linked to a team;
    `needs_connection` when the linked team has no connected social account; `ready` when it has
    one. `kit_id` is the linked kit, else the brand's newest kit, else null."""
    stored = {item.module: item for item in brand.research_items.all()}
    items = []
    for module in ResearchModule.values:
        item = stored.get(module)
        items.append(
            {
                "module": module,
                "status": item.status if item else ResearchStatus.NOT_STARTED.value,
                "error_message": (item.error_message or None) if item else None,
                "updated_at": item.updated_at if item else None,
            }
        )
    kits = list(
        BrandKit.objects.filter(brand=brand)
        .select_related("team")
        .order_by(F("linked_at").desc(nulls_last=True), "-created_at")
    )
    linked = next((k for k in kits if k.team is not None), None)
    if linked is None:
        state, kit = "pending", (kits[0] if kits else None)
    else:
        state, kit = ("ready" if linked.team.usable_connected_accounts else "needs_connection"), linked
    return {"items": items, "social_readiness": {"state": state, "kit_id": kit.id if kit else None}}
