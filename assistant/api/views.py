"""The assistant's conversation and AllModelChat (image models, credits, image generation)."""

from __future__ import annotations

from django.core.files.storage import default_storage
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from assistant import selectors, services
from assistant.api.serializers import (
    AssistantExchangeSerializer,
    AssistantMessageInput,
    ConversationSerializer,
    CreditBalanceSerializer,
    ImageGenerateInput,
    ImageGenerationResultSerializer,
    ImageModelSerializer,
)
from assistant.registry import IMAGE_MODELS, default_model
from core.access import Access
from core.api.pagination import PageQuery, envelope, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.idempotency import idempotent

LLM_FAILED = error_response("The language model failed (`provider_error`); nothing was stored.")
LLM_UNAVAILABLE = error_response("The language model is not configured or cannot be reached (`provider_unavailable`).")


class AssistantMessagesView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="assistant_messages_create",
        summary="Send a message to your assistant",
        description=(
            "Stores your message and the assistant's reply (your first message creates your assistant). "
            "If the language model fails, nothing is stored."
        ),
        tags=["assistant"],
        request=AssistantMessageInput,
        responses={201: AssistantExchangeSerializer, 502: LLM_FAILED, 503: LLM_UNAVAILABLE},
    )
    @idempotent
    def post(self, request):
        data = self.body(AssistantMessageInput)
        attachments = [dict(a) for a in data.get("attachments", [])]
        exchange = services.assistant_message_send(user=request.user, content=data["content"], attachments=attachments)
        return Response(AssistantExchangeSerializer(exchange).data, status=status.HTTP_201_CREATED)


class AssistantConversationsView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="assistant_conversations",
        summary="Your conversation with the assistant, newest first",
        tags=["assistant"],
        parameters=[PageQuery],
        responses=ConversationSerializer,
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more = selectors.assistant_messages_page(user=request.user, **params)
        return Response(ConversationSerializer({"messages": rows, "total": total, "has_more": has_more}).data)


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
        tags=["allmodelchat"],
        parameters=[PageQuery],
        responses=envelope(ImageModelSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
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
        summary="Your credit balance",
        tags=["allmodelchat"],
        responses=CreditBalanceSerializer,
    )
    def get(self, request):
        return Response(CreditBalanceSerializer({"credits": selectors.credit_balance(user=request.user)}).data)


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
        )
        url = request.build_absolute_uri(default_storage.url(generation.storage_name))
        return Response(
            ImageGenerationResultSerializer(
                {"url": url, "model": generation.model, "credit_cost": generation.credit_cost}
            ).data
        )
