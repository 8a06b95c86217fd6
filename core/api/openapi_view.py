"""`/openapi.json`: generated once per process, served compact, gzip-compressed on request, with a strong ETag.

Generating the document walks every view and serializer (hundreds of milliseconds); it cannot change
while the process runs, so it is built once, and the bytes for each origin (`servers` names the origin
the client fetched it from, see core.api.schema.add_servers_and_contact) are kept beside it.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections import OrderedDict

from django.core.signals import setting_changed
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from core.api.schema import add_servers_and_contact

MEDIA_TYPE = "application/vnd.oai.openapi+json"
# A client (or Swagger UI) revalidates with If-None-Match; the document changes only with a deploy.
CACHE_CONTROL = "public, max-age=0, must-revalidate"
_MAX_ORIGINS = 8  # ALLOWED_HOSTS bounds the origins; this bounds the memory they take

_lock = threading.Lock()
_schema: dict | None = None
_rendered: OrderedDict[str, tuple[bytes, bytes, str]] = OrderedDict()


def _clear(**kwargs) -> None:
    global _schema
    with _lock:
        _schema = None
        _rendered.clear()


setting_changed.connect(_clear)  # tests that change settings get a fresh document


def _generated() -> dict:
    global _schema
    if _schema is None:
        _schema = SchemaGenerator().get_schema(request=None, public=spectacular_settings.SERVE_PUBLIC)
    return _schema


def rendered(request) -> tuple[bytes, bytes, str]:
    """(compact JSON, its gzip, strong ETag of the JSON) of the document as served to `request`'s origin."""
    origin = request.build_absolute_uri("/")
    with _lock:
        if origin in _rendered:
            _rendered.move_to_end(origin)
            return _rendered[origin]
        schema = add_servers_and_contact(dict(_generated()), None, request, True)
        body = JSONRenderer().render(schema, renderer_context={"indent": None})
        entry = (body, gzip.compress(body, mtime=0), hashlib.sha256(body).hexdigest()[:32])
        _rendered[origin] = entry
        while len(_rendered) > _MAX_ORIGINS:
            _rendered.popitem(last=False)
        return entry


def _accepts_gzip(request) -> bool:
    for coding in request.META.get("HTTP_ACCEPT_ENCODING", "").split(","):
        name, _, params = coding.strip().partition(";")
        if name.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00"):
            return True
    return False


class OpenApiView(APIView):
    """The OpenAPI 3.1 document of this API."""

    authentication_classes = ()
    permission_classes = ()

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        body, compressed, digest = rendered(request)
        gzipped = _accepts_gzip(request)
        # Each encoding is its own representation, so each has its own strong validator.
        etag = f'"{digest}-gzip"' if gzipped else f'"{digest}"'
        matches = parse_etags(request.META.get("HTTP_IF_NONE_MATCH", ""))
        if "*" in matches or etag in matches:
            response = HttpResponseNotModified()
        else:
            response = HttpResponse(compressed if gzipped else body, content_type=MEDIA_TYPE)
            if gzipped:
                response["Content-Encoding"] = "gzip"
        response["ETag"] = etag
        response["Cache-Control"] = CACHE_CONTROL
        patch_vary_headers(response, ("Accept-Encoding",))
        return response
