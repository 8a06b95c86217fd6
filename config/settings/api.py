"""The HTTP API's libraries: Django REST framework, simplejwt and drf-spectacular (the OpenAPI document)."""

from __future__ import annotations

from datetime import timedelta

from config.settings.env import env

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["core.api.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.negotiation.ContentNegotiation",
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # The representation is chosen by the Accept header only (JSON, or CSV where a view offers an export):
    # DRF's `?format=` would be an undocumented second way, and a 404 for a value it does not know.
    "URL_FORMAT_OVERRIDE": None,
}

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=env.int("JWT_ACCESS_MINUTES", default=15)),
    "REFRESH_TOKEN_LIFETIME": timedelta(days=env.int("JWT_REFRESH_DAYS", default=7)),
    "ROTATE_REFRESH_TOKENS": True,
    "BLACKLIST_AFTER_ROTATION": True,
    "UPDATE_LAST_LOGIN": False,
    "USER_ID_FIELD": "id",
    "USER_ID_CLAIM": "user_id",
    "SIGNING_KEY": env.str("JWT_SIGNING_KEY", default=env.str("DJANGO_SECRET_KEY")),
    "AUTH_HEADER_TYPES": ("Bearer",),
    # Every token carries a hash of the password hash; a password change ends every access token at once
    # (accounts.authentication) and every refresh token too (see docs/decisions.md#identity-and-authentication).
    "CHECK_REVOKE_TOKEN": True,
    "REVOKE_TOKEN_CLAIM": "hash_password",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Brand Marketing and Task Platform API",
    "DESCRIPTION": (
        "Marketing backend and AI-agent task marketplace. Every operation except the public ones "
        "(`security: []`) takes `Authorization: Bearer <token>`, where the token is either a JWT from "
        "`POST /api/v1/auth/token` or an API key (`bmk_...`) on the operations that accept keys. "
        "Validation errors are 422 with a Pydantic-style `detail` list; every other error is "
        '`{"detail": "...", "code": "..."}`. Requests are rate limited per client IP and path prefix; '
        "see the `X-RateLimit-*` headers. JSON strings may not contain U+0000 (refused as `json_invalid`). "
        "The guide to the flows and the rules behind them is at [/docs/guide](/docs/guide)."
    ),
    # The API's version, as in its paths (/api/v1): a generated client is versioned by it.
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    # The contact's URL (this server's /docs/guide) and `servers` (the request's own origin) are filled in
    # per request by core.api.schema.add_servers_and_contact.
    "CONTACT": {"name": "Brand Marketing and Task Platform: API guide"},
    # Every tag an operation uses, in the order Swagger UI shows them (tests/test_openapi.py checks both ways).
    "TAGS": [
        {"name": "auth", "description": "Registration, JWTs (token, refresh) and API keys."},
        {"name": "brands", "description": "Brands, the root of competitors, research, intelligence and publications."},
        {"name": "competitors", "description": "A brand's competitor roster: discovered rows merged with kit names."},
        {"name": "brand intelligence", "description": "Tracked groups of advertisers across modules, and artifacts."},
        {"name": "brand kits", "description": "Brand kits, and linking a kit to a team (starts the brand audits)."},
        {
            "name": "publications",
            "description": "Publishing creatives to social platforms.",
        },
        {"name": "connected accounts", "description": "A brand's social accounts that publications go through."},
        {"name": "ads", "description": "The ad-spend simulator."},
        {"name": "assistant", "description": "The assistant's conversation and its history."},
        {"name": "allmodelchat", "description": "Image generation paid with credits; credit packs and the ledger."},
        {"name": "teams", "description": "Agent teams on a paid subscription."},
        {"name": "tasks", "description": "The task marketplace: post, list, cancel, remix tasks."},
        {"name": "bids", "description": "Bids on tasks, their judge scores and artefacts; selecting starts payment."},
        {"name": "deliveries", "description": "The winning agent's delivery: dispatch, submit, review, retry."},
        {"name": "agents", "description": "Agents that bid on tasks: endpoint, signing secret, benchmarks."},
        {"name": "reputation", "description": "Agents' records from verified outcomes, and the posters' reviews."},
        {
            "name": "payouts",
            "description": "Sellers' money: payout account onboarding, balance, earnings (net of the platform fee), "
            "payouts.",
        },
        {"name": "webhooks", "description": "Outbound webhook subscriptions, and the inbound payments webhook."},
        {"name": "free tools", "description": "Public brief, tagline and website tools (rate limited per hour)."},
        {"name": "admin scrapers", "description": "Staff only: snapshot jobs at the scraping provider."},
        {"name": "ops", "description": "Health of the service and its dependencies."},
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # validatorUrl: Swagger UI would otherwise send the schema to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "displayOperationId": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "PATH_CONVERTER_OVERRIDES": {"uid": {"type": "string", "format": "uuid"}},
    # One schema name per shared choice set (a field and its list form would otherwise get two).
    "ENUM_NAME_OVERRIDES": {
        "CampaignObjectiveEnum": "assistant.domain.catalogue.OBJECTIVE_CHOICES",
        "CampaignChannelEnum": "assistant.domain.catalogue.CHANNEL_CHOICES",
        "AttachmentTypeEnum": "assistant.domain.catalogue.ATTACHMENT_TYPES",
        "ImageProviderEnum": "assistant.domain.catalogue.IMAGE_PROVIDERS",
        "SnapshotStatusEnum": "scrapers.models.SnapshotStatus",
        "ScraperProviderEnum": "scrapers.providers.PROVIDERS",
        "ResearchModuleEnum": "brands.models.brand.ResearchModule",
        "TaskStatusEnum": "tasks_market.models.market.TaskStatus",
        "TaskCategoryEnum": "tasks_market.models.market.TaskCategory",
        "CurrencyEnum": "tasks_market.models.market.CURRENCIES",
        "JudgeCriterionEnum": "tasks_market.services.judging.CRITERIA",
        "PreviewKindEnum": "brands.api.serializers.publications.PREVIEW_KINDS",
        "CreditTransactionKindEnum": "assistant.models.CreditTransaction.Kind",
        "JudgementStatusEnum": "tasks_market.models.market.JudgementStatus",
        "WebhookEventTypeEnum": "webhooks_app.event_types.EVENT_TYPES",
        "PaymentProviderEnum": "payments.providers.PROVIDERS",
        "ConnectedPlatformEnum": "brands.models.connections.ConnectedPlatform",
        "PlatformEnum": "brands.models.publications.PublicationPlatform",  # as before ConnectedPlatformEnum
        # Shared by two components each (a payment and its receipt; a payout in the list and alone).
        "PaymentStatusEnum": "payments.models.PaymentStatus",
        "PayoutStatusEnum": "payments.models.Payout.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.drop_plain_choice_lists",
        "core.api.schema.mark_public_operations",
        "config.schema_links.add_links",
        "core.api.schema.add_servers_and_contact",
    ],
}
