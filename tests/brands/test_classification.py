from __future__ import annotations

from datetime import UTC, datetime

from brands.audits.classification import classify

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_a_clear_brand_is_classified_with_several_labels():
    result, scores = classify(
        name="Trailblaze Running",
        industry="Sports",
        texts=["Running shoes and outdoor apparel. Shop online with free shipping, or subscribe for monthly socks."],
        now=NOW,
    )

    assert result["primary_industry"] == "sports_outdoors"
    assert result["industries"][:2] == ["sports_outdoors", "apparel_fashion"]
    assert {"ecommerce", "subscription"} <= set(result["business_models"])
    assert result == {**result, "version": "keyword-rules/1", "source": "keyword_rules"}
    assert result["classified_at"] == "2026-01-02T03:04:05Z"
    assert result["needs_review"] is False
    assert scores["industries"]["sports_outdoors"] > scores["industries"]["apparel_fashion"]


def test_too_little_text_needs_review():
    result, _ = classify(name="Zyx", industry="", texts=[], now=NOW)

    assert result["primary_industry"] is None
    assert result["industries"] == [] and result["business_models"] == []
    assert result["needs_review"] is True
