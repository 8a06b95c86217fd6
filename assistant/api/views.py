"""The assistant's conversation, AllModelChat (image models, credits, image generation) and the free
public tools."""

from __future__ import annotations

from django.core.files.storage import default_storage
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from assistant import selectors, services
from assistant.api.serializers import (
    AssistantExchangeSerializer,
    AssistantMessageInput,
    BriefInput,
    BriefSuggestionsQuery,
    BriefSuggestionsSerializer,
    ConversationSerializer,
    CreativeBriefSerializer,
    CreditBalanceSerializer,
    CreditTopUpInput,
    CreditTopUpPaymentSerializer,
    CreditTransactionSerializer,
    ImageGenerateInput,
    ImageGenerationResultSerializer,
    ImageModelSerializer,
    ScrapeWebsiteInput,
    TaglineInput,
    TaglinesSerializer,
    WebsiteFactsSerializer,
)
from assistant.domain.image_models import IMAGE_MODELS, default_model
from assistant.services import free_tools
from core.api.pagination import OffsetPageQuery, PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent
from core.http.outbound import UnsafeURL

LLM_FAILED = error_response("The language model failed (`provider_error`); nothing was stored.")
LLM_UNAVAILABLE = error_response("The language model is not configured or cannot be reached (`provider_unavailable`).")


class AssistantMessagesView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="assistant_messages_create",
        summary="Send a message to your assistant",
        description=(
            "Stores your message and the assistant's reply (your first message creates your assistant). "
            "If the language model fails, nothing is stored. A message answered by a remote language model "
            "costs `ASSISTANT_MESSAGE_CREDITS` credits (1 by default; the ledger's `assistant_message`), given "
            "back if the model fails (`assistant_refund`); the local model is free."
        ),
        tags=["assistant"],
        request=AssistantMessageInput,
        responses={
            201: AssistantExchangeSerializer,
            402: error_response("Not enough credits for a message (`insufficient_credits`); nothing was taken."),
            502: LLM_FAILED,
            503: LLM_UNAVAILABLE,
        },
    )
    @idempotent
    def post(self, request):
        data = self.body(AssistantMessageInput)
        attachments = [dict(a) for a in data.get("attachments", [])]
        exchange = services.assistant_message_send(user=request.user, content=data["content"], attachments=attachments)
        return self.created(AssistantExchangeSerializer(exchange).data, "assistant-conversations")


class AssistantConversationsView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="assistant_conversations",
        summary="Your conversation with the assistant, newest first",
        description=(
            "The messages of your one conversation (yours and the assistant's), paged by `offset` or by `cursor` "
            "(the previous page's `next_cursor`), with `total` and `has_more`."
        ),
        tags=["assistant"],
        parameters=[PageQuery],
        responses=ConversationSerializer,
    )
    def get(self, request):
        params = self.query(PageQuery)
        page = keyset_page(selectors.assistant_messages(user=request.user), **params)
        body = {"messages": page.rows, "total": page.total, "has_more": page.has_more, "next_cursor": page.next_cursor}
        return Response(ConversationSerializer(body).data)


class AssistantMeView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="assistant_delete",
        summary="Delete your assistant and its whole history",
        description="204 whether or not you had one. Your next message starts a fresh assistant.",
        tags=["assistant"],
        responses={204: OpenApiResponse(description="Deleted (or there was none).")},
    )
    def delete(self, request):
        services.assistant_delete(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ImageModelsView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="allmodelchat_models",
        summary="Image models, their credit cost and which is the default",
        description=(
            "Every image model with its `credit_cost`, whether it is `available` now and which one is used when a "
            "request names none (`default`)."
        ),
        tags=["allmodelchat"],
        parameters=[OffsetPageQuery],
        responses=envelope(ImageModelSerializer),
    )
    def get(self, request):
        params = self.query(OffsetPageQuery)
        default = default_model().identifier
        models = [
            {
                "identifier": m.identifier,
                "provider": m.provider,
                "credit_cost": m.credit_cost,
                "default": m.identifier == default,
                "available": m.available,
                "description": m.description,
            }
            for m in IMAGE_MODELS
        ]
        rows = models[params["offset"] : params["offset"] + params["limit"]]
        has_more = params["offset"] + len(rows) < len(models)
        return Response(render_page(ImageModelSerializer, rows, len(models), has_more))


class CreditsView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="allmodelchat_credits",
        summary="Your credit balance and the credit packs on sale",
        description="Buy a pack with `POST /api/v1/allmodelchat/credits/top-up`.",
        tags=["allmodelchat"],
        responses=CreditBalanceSerializer,
        examples=[
            OpenApiExample(
                "Balance and packs",
                response_only=True,
                value={
                    "credits": 10,
                    "packs": [
                        {"id": "small", "credits": 20, "price": "5.00", "currency": "usd"},
                        {"id": "medium", "credits": 100, "price": "20.00", "currency": "usd"},
                    ],
                },
            )
        ],
    )
    def get(self, request):
        data = {"credits": selectors.credit_balance(user=request.user), "packs": selectors.credit_packs()}
        return Response(CreditBalanceSerializer(data).data)


class CreditTopUpView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="allmodelchat_credits_top_up",
        summary="Buy a credit pack",
        description=(
            "Creates a payment for the pack at the payment provider (metadata `kind=credit_top_up`). Pay it at "
            "`checkout_url` (a hosted page, which links back to `success_url` / `cancel_url` when given) or with "
            "`client_secret`. When the payment succeeds the pack's credits are added to your balance, once "
            "however often the provider repeats the event; a failed payment adds nothing. 422 for an unknown pack."
        ),
        tags=["allmodelchat"],
        request=CreditTopUpInput,
        responses={
            201: CreditTopUpPaymentSerializer,
            502: error_response("The payment provider refused (`provider_error`); nothing was created."),
            503: error_response("The payment provider is unavailable (`provider_unavailable`); nothing was created."),
        },
        examples=[
            OpenApiExample(
                "Buy the small pack",
                request_only=True,
                value={"pack": "small", "success_url": "https://app.example.com/credits?paid=1"},
            ),
            OpenApiExample(
                "The payment to make",
                response_only=True,
                status_codes=["201"],
                value={
                    "id": "6f1c2d3e-4b5a-4c6d-8e7f-901234567890",
                    "provider": "local",
                    "provider_payment_id": "pi_3Kx9aBcDeFgHiJkLmNoPqRsT",
                    "amount": "5.00",
                    "currency": "usd",
                    "status": "requires_payment",
                    "client_secret": "pi_3Kx9aBcDeFgHiJkLmNoPqRsT_secret_a1b2c3",
                    "checkout_url": "https://127.0.0.1:8443/checkout/Qm9vb1h2c3Vy...",
                },
            ),
        ],
    )
    @idempotent
    def post(self, request):
        data = self.body(CreditTopUpInput)
        top_up = services.credit_top_up_start(user=request.user, **data)
        # The top-up has no URL of its own: Location is the balance it will raise (docs/decisions.md#creates).
        return self.created(CreditTopUpPaymentSerializer(top_up).data, "allmodelchat-credits")


class CreditTransactionsView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="allmodelchat_credits_transactions",
        summary="Your credit ledger, newest first",
        description=(
            "Every change of your balance: `grant` (on registration), `purchase` (a credit pack), "
            "`image_generation` (a spend), `image_refund` (a failed image given back) and `adjustment` (by staff)."
        ),
        tags=["allmodelchat"],
        parameters=[PageQuery],
        responses=envelope(CreditTransactionSerializer),
        examples=[
            OpenApiExample(
                "A grant, a spend and a purchase",
                response_only=True,
                value={
                    "items": [
                        {
                            "id": "0b7e1d2c-3f4a-4b5c-9d6e-7f8091a2b3c4",
                            "kind": "purchase",
                            "delta": 20,
                            "balance_after": 29,
                            "reason": "Bought the small pack (5.00 USD)",
                            "reference": "6f1c2d3e-4b5a-4c6d-8e7f-901234567890",
                            "created_at": "2026-01-05T10:02:00Z",
                        },
                        {
                            "id": "1c8f2e3d-4a5b-4c6d-8e7f-9012a3b4c5d6",
                            "kind": "image_generation",
                            "delta": -1,
                            "balance_after": 9,
                            "reason": "Image with local-canvas-1",
                            "reference": "2d9a3f4e-5b6c-4d7e-8f90-a1b2c3d4e5f6",
                            "created_at": "2026-01-05T10:01:00Z",
                        },
                        {
                            "id": "2d9a3f4e-5b6c-4d7e-8f90-a1b2c3d4e5f7",
                            "kind": "grant",
                            "delta": 10,
                            "balance_after": 10,
                            "reason": "Welcome: 10 credits",
                            "reference": "",
                            "created_at": "2026-01-05T10:00:00Z",
                        },
                    ],
                    "total": 3,
                    "has_more": False,
                    "next_cursor": None,
                    "total_exact": True,
                },
            )
        ],
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(selectors.credit_transactions(user=request.user), **params)
        return Response(render_page(CreditTransactionSerializer, rows, total, has_more, next_cursor=next_cursor))


class ImageGenerateView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="allmodelchat_generate_image",
        summary="Generate an image",
        description=(
            "Takes the model's `credit_cost` from your balance before drawing, and gives it back if the provider "
            "fails. See `GET /api/v1/allmodelchat/models` for the models and `.../credits` for your balance."
        ),
        tags=["allmodelchat"],
        request=ImageGenerateInput,
        responses={
            200: ImageGenerationResultSerializer,
            402: error_response("Not enough credits (`insufficient_credits`); nothing was taken."),
            404: error_response("`brand_id` is not one of your brands (`not_found`); nothing was taken."),
            502: error_response("The image provider failed (`provider_error`); your credits were given back."),
            503: error_response(
                "The model's provider is not configured or cannot be reached (`provider_unavailable`); "
                "no credits were kept."
            ),
        },
    )
    @idempotent
    def post(self, request):
        data = self.body(ImageGenerateInput)
        generation = services.image_generate(
            user=request.user,
            prompt=data["prompt"],
            model=data.get("model"),
            conversation_id=data["conversation_id"],
            brand_id=data.get("brand_id"),
        )
        url = request.build_absolute_uri(default_storage.url(generation.storage_name))
        return Response(
            ImageGenerationResultSerializer(
                {"url": url, "model": generation.model, "credit_cost": generation.credit_cost}
            ).data
        )


# --- The free public tools: each path has its own hourly rate-limit bucket (docs/decisions.md#rate-limits) ---

LLM_ERRORS = {502: LLM_FAILED, 503: LLM_UNAVAILABLE}


class BriefGenerateView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="brief_generate",
        summary="Draft a creative brief (free, 10 per hour)",
        description=(
            "From a brand name or website (the site is not fetched; its domain names the brand), an objective, "
            "the audience and the channels. Written by the language model (`local-template-1` by default)."
        ),
        tags=["free tools"],
        request=BriefInput,
        responses={200: CreativeBriefSerializer, **LLM_ERRORS},
    )
    def post(self, request):
        data = self.body(BriefInput)
        brief = free_tools.brief_generate(
            brand_name=data.get("brand_name", ""),
            website=data.get("website", ""),
            objective=data["objective"],
            audience=data["audience"],
            channels=data["channels"],
        )
        return Response(CreativeBriefSerializer(brief).data)


class BriefSuggestionsView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="brief_suggestions",
        summary="Objectives, audiences and channels to start a brief with (free, 60 per hour)",
        description=(
            "Starting points for a brief matching `q` (free text): objectives, audiences and channels. Public, no "
            "account needed."
        ),
        tags=["free tools"],
        parameters=[BriefSuggestionsQuery],
        responses={200: BriefSuggestionsSerializer, **LLM_ERRORS},
    )
    def get(self, request):
        params = self.query(BriefSuggestionsQuery)
        return Response(BriefSuggestionsSerializer(free_tools.brief_suggestions(query=params["q"].strip())).data)


class TaglineView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="signature_tagline",
        summary="Taglines for an e-mail signature (free, 10 per hour)",
        description=(
            "`count` short taglines for a brand, in the `tone` asked for, drafted by the language model. Public, no "
            "account needed."
        ),
        tags=["free tools"],
        request=TaglineInput,
        responses={200: TaglinesSerializer, **LLM_ERRORS},
    )
    def post(self, request):
        data = self.body(TaglineInput)
        result = free_tools.taglines_generate(
            brand_name=data["brand_name"], description=data["description"], tone=data["tone"], count=data["count"]
        )
        return Response(TaglinesSerializer(result).data)


class ScrapeWebsiteView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="signature_scrape_website",
        summary="Read a website's title, description, logo, colours, social links and headings (free, 5 per hour)",
        description=(
            "Fetches the page (10 s timeout, first 2 MiB, at most 5 redirects, each one checked again). "
            "Any reason the page cannot be read is a 422 on `url` (`value_error`, the reason in `msg` and "
            "`ctx.error`): a private, loopback or link-local address; a site that cannot be reached or does not "
            "answer in time; an HTTP error status; a response that is not HTML."
        ),
        tags=["free tools"],
        request=ScrapeWebsiteInput,
        responses={200: WebsiteFactsSerializer},
    )
    def post(self, request):
        data = self.body(ScrapeWebsiteInput)
        try:
            facts = free_tools.website_facts(url=data["url"])
        except (UnsafeURL, free_tools.PageUnavailable) as exc:
            message = str(exc)
            raise RequestValidationError(
                [error("value_error", ["body", "url"], f"Value error, {message}", data["url"], {"error": message})]
            ) from exc
        return Response(WebsiteFactsSerializer(facts).data)
