"""A test-only middleware of the multi-node cluster (tests/e2e/multinode_settings.py): an answer held back.

A request with `X-Multinode-Hold: <token>` runs like any other (its work is committed), then its answer
waits HOLD_SECONDS before it leaves the node, with the file VAR_DIR/held/<token> (holding the status)
saying so. The web node kill drill (scripts/multinode.py) kills a node while it holds such answers: the
moment where a proxy that sends the request again to the other node would apply it twice.
"""

from __future__ import annotations

import re
import time

from django.conf import settings

HOLD_SECONDS = 10
_TOKEN = re.compile(r"^[a-z0-9-]{1,64}$")


class HoldAnswer:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        token = request.headers.get("X-Multinode-Hold", "")
        if _TOKEN.match(token):
            held = settings.VAR_DIR / "held"
            held.mkdir(exist_ok=True)
            (held / token).write_text(str(response.status_code))
            time.sleep(HOLD_SECONDS)
        return response
