"""Models of the brands app, one module per area."""

from brands.models.brand import Brand, BrandKit, ResearchItem, ResearchModule, ResearchStatus
from brands.models.competitors import (
    DISCOVERED_ORIGINS,
    BrandCompetitor,
    CompetitorOrigin,
    CompetitorSeed,
    CompetitorSource,
    SeedOrigin,
)
from brands.models.connections import ConnectedAccount, ConnectedPlatform, ConnectionHealth
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
    "DISCOVERED_ORIGINS",
    "Advertiser",
    "Artifact",
    "Brand",
    "BrandCompetitor",
    "BrandKit",
    "CompetitorOrigin",
    "CompetitorSeed",
    "CompetitorSource",
    "ConnectedAccount",
    "ConnectedPlatform",
    "ConnectionHealth",
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
