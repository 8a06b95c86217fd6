"""core.api.negotiation answers what DRF's own negotiation answers, for every Accept header."""

from __future__ import annotations

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core.api.negotiation import ContentNegotiation
from core.api.renderers import CSVRenderer
from core.api.renderers import JSONRenderer as ProjectJSONRenderer

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "application/json;indent=2",
    "text/html",
    "text/html, application/json;q=0.9",
    "application/*",
    "application/json, */*",
    "*/*; q=0.5, application/json",
    "APPLICATION/JSON",
    "text/csv",
    "text/csv, application/json;q=0.5",
]


@pytest.mark.parametrize(
    "renderers",
    [[ProjectJSONRenderer()], [ProjectJSONRenderer(), CSVRenderer()], [JSONRenderer(), BrowsableAPIRenderer()]],
)
@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api"])
def test_the_same_choice_as_drf(accept, query, renderers):
    extra = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/api/v1/tasks{query}", **extra))

    def choose(negotiation):
        try:
            renderer, media_type = negotiation.select_renderer(request, renderers)
        except Exception as exc:  # e.g. NotAcceptable: the same exception both ways
            return type(exc), str(exc)
        return type(renderer), media_type

    assert choose(ContentNegotiation()) == choose(DefaultContentNegotiation())
