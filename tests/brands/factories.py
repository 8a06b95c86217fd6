from __future__ import annotations

import factory

from brands.models import Advertiser, Brand, BrandKit, CompetitorSeed, SeedOrigin
from teams.models import Team


class BrandFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Brand

    name = factory.Sequence(lambda n: f"Brand {n}")
    website_url = ""
    domain = factory.Sequence(lambda n: f"brand{n}.example")


class BrandKitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = BrandKit

    brand = factory.SubFactory(BrandFactory)
    owner = factory.SelfAttribute("brand.owner")
    name = factory.Sequence(lambda n: f"Kit {n}")
    competitor_names = factory.LazyFunction(list)


class CompetitorSeedFactory(factory.django.DjangoModelFactory):
    """A public seed for `target_domain`; pass owner=... with origin=private for a private one."""

    class Meta:
        model = CompetitorSeed

    name = factory.Sequence(lambda n: f"Rival {n}")
    target_domain = "acme.example"
    origin = SeedOrigin.PUBLIC
    owner = None
    canonical_domain = factory.Sequence(lambda n: f"rival{n}.example")
    website_url = factory.LazyAttribute(lambda o: f"https://{o.canonical_domain}/")
    description = "Discovered by SEO overlap."
    industry = "apparel_fashion"
    social_links = factory.LazyFunction(lambda: {"instagram": "https://instagram.com/rival"})
    analysis_data = factory.LazyFunction(lambda: {"keyword_overlap": 0.42})
    active_paid_media_platforms = factory.LazyFunction(lambda: ["meta"])


class AdvertiserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Advertiser

    name = factory.Sequence(lambda n: f"Advertiser {n}")
    domain = factory.Sequence(lambda n: f"advertiser{n}.example")


def make_team(owner, **fields) -> Team:
    defaults = {"team_type": "marketing", "display_name": "Growth team"}
    return Team.objects.create(owner=owner, **{**defaults, **fields})
