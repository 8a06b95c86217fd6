"""Content negotiation: DRF's, answered at once for the Accept headers that nearly every client sends."""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation


class ContentNegotiation(DefaultContentNegotiation):
    """No Accept header, `*/*` or exactly a renderer's media type: the renderer DRF would choose, without
    parsing and ranking the header (a measurable share of the hottest read's CPU). Anything else
    (parameters such as `indent`, several types, qualities, a `format` override) goes through DRF."""

    def select_renderer(self, request, renderers, format_suffix=None):
        accept = request.META.get("HTTP_ACCEPT", "*/*")
        if format_suffix is None and self.settings.URL_FORMAT_OVERRIDE not in request.query_params:
            if accept == "*/*" and renderers:
                return renderers[0], renderers[0].media_type
            for renderer in renderers:
                if renderer.media_type == accept:
                    return renderer, accept
        return super().select_renderer(request, renderers, format_suffix)
