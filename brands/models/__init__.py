"""Models of the brands app, one module per area."""

from brands.models.brand import Brand, BrandKit, ResearchItem, ResearchModule, ResearchStatus
from brands.models.competitors import BrandCompetitor, CompetitorSeed, CompetitorSource, SeedOrigin
from brands.models.intelligence import Advertiser, Artifact, TrackedGroup, TrackedGroupFork, TrackedGroupMember
from brands.models.publications import (
    LocalPublishedPost,
    Publication,
    PublicationAction,
    PublicationPhase,
    PublicationPlatform,
    PublicationStatus,
)

__all__ = [
    "Advertiser",
    "Artifact",
    "Brand",
    "BrandCompetitor",
    "BrandKit",
    "CompetitorSeed",
    "CompetitorSource",
    "LocalPublishedPost",
    "Publication",
    "PublicationAction",
    "PublicationPhase",
    "PublicationPlatform",
    "PublicationStatus",
    "ResearchItem",
    "ResearchModule",
    "ResearchStatus",
    "SeedOrigin",
    "TrackedGroup",
    "TrackedGroupFork",
    "TrackedGroupMember",
]
