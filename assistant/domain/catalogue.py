"""Vocabulary of the free creative tools: campaign objectives, channels and tagline tones."""

from __future__ import annotations

OBJECTIVES: dict[str, str] = {
    "awareness": "Brand awareness",
    "consideration": "Consideration",
    "leads": "Lead generation",
    "sales": "Sales",
    "app_installs": "App installs",
    "retention": "Retention and loyalty",
    "launch": "Product launch",
}

CHANNELS: dict[str, str] = {
    "instagram": "Instagram",
    "facebook": "Facebook",
    "tiktok": "TikTok",
    "youtube": "YouTube",
    "linkedin": "LinkedIn",
    "x": "X (Twitter)",
    "pinterest": "Pinterest",
    "google_search": "Google Search",
    "display": "Display advertising",
    "email": "E-mail",
    "influencers": "Influencer partnerships",
    "podcasts": "Podcasts",
    "out_of_home": "Out of home",
}

TONES: tuple[str, ...] = ("friendly", "bold", "premium", "playful", "professional")

ATTACHMENT_TYPES: tuple[str, ...] = ("image", "link")

# Named enums in the OpenAPI schema (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
OBJECTIVE_CHOICES = list(OBJECTIVES)
CHANNEL_CHOICES = list(CHANNELS)
IMAGE_PROVIDERS: tuple[str, ...] = ("local", "openai")
