"""The free public tools. Each path has its own hourly rate-limit bucket (CONTRACT §5)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from assistant import freetools
from assistant.api.serializers import (
    BriefInput,
    BriefSuggestionsQuery,
    BriefSuggestionsSerializer,
    CreativeBriefSerializer,
    ScrapeWebsiteInput,
    TaglineInput,
    TaglinesSerializer,
    WebsiteFactsSerializer,
)
from assistant.api.views import LLM_FAILED, LLM_UNAVAILABLE
from core.access import Access
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView
from core.outbound import UnsafeURL

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
        brief = freetools.brief_generate(
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
        tags=["free tools"],
        parameters=[BriefSuggestionsQuery],
        responses={200: BriefSuggestionsSerializer, **LLM_ERRORS},
    )
    def get(self, request):
        params = self.query(BriefSuggestionsQuery)
        return Response(BriefSuggestionsSerializer(freetools.brief_suggestions(query=params["q"].strip())).data)


class TaglineView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="signature_tagline",
        summary="Taglines for an e-mail signature (free, 10 per hour)",
        tags=["free tools"],
        request=TaglineInput,
        responses={200: TaglinesSerializer, **LLM_ERRORS},
    )
    def post(self, request):
        data = self.body(TaglineInput)
        result = freetools.taglines_generate(
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
            facts = freetools.website_facts(url=data["url"])
        except (UnsafeURL, freetools.PageUnavailable) as exc:
            message = str(exc)
            raise RequestValidationError(
                [error("value_error", ["body", "url"], f"Value error, {message}", data["url"], {"error": message})]
            ) from exc
        return Response(WebsiteFactsSerializer(facts).data)
