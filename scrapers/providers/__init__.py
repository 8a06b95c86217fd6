"""Scraping providers: `local` (default, a real scraper on this machine) and `brightdata`."""

from __future__ import annotations

from django.conf import settings

from core.http.errors import ProviderUnavailable
from scrapers.providers.base import DatasetNotFound, Progress, ScraperProvider, SnapshotNotFound
from scrapers.providers.brightdata import BrightDataProvider
from scrapers.providers.local import LocalScraperProvider

PROVIDERS = ("local", "brightdata")

__all__ = ["PROVIDERS", "DatasetNotFound", "Progress", "ScraperProvider", "SnapshotNotFound", "get_scraper_provider"]


def get_scraper_provider(name: str | None = None) -> ScraperProvider:
    """The provider called `name`, or the configured one (settings.SCRAPER_PROVIDER)."""
    name = name or settings.SCRAPER_PROVIDER
    if name == "local":
        return LocalScraperProvider()
    if name == "brightdata":
        return BrightDataProvider()
    raise ProviderUnavailable(f"Unknown scraper provider {name!r}.")
