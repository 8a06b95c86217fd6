"""Generated images on the S3-compatible storage every node shares (docs/operations.md#media-storage).

The S3 stand-in is moto's server in a thread on 127.0.0.1 (tests/support/s3_server.py): the image is PUT to
its bucket over HTTP by django-storages, and the URL the API answers serves the same bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from django.core.files.storage import default_storage
from django.test import override_settings

from assistant.models import ImageGeneration
from assistant.providers.images.local import render_png
from tests.support.credits import credits_set
from tests.support.s3_server import s3_stand_in
from tests.support.settings_probe import DEV_ONLY, ROOT, run_probe

GENERATE = "/api/v1/allmodelchat/generate/image"
PROMPT = "A lighthouse at dawn, teal and orange"


@pytest.fixture(scope="module")
def bucket():
    with s3_stand_in(bucket=f"media-{uuid.uuid4().hex[:8]}") as stand_in:
        yield stand_in


@pytest.mark.django_db
def test_the_image_is_put_to_the_bucket_and_its_url_serves_the_same_bytes(alice_api, alice, bucket):
    credits_set(alice, 2)

    with override_settings(STORAGES=bucket.storages()):
        response = alice_api.post(GENERATE, {"prompt": PROMPT, "conversation_id": str(uuid.uuid4())}, format="json")
        assert response.status_code == 200, response.content
        generation = ImageGeneration.objects.get(user=alice)
        assert default_storage.exists(generation.storage_name)

    url = response.json()["url"]
    assert url == f"{bucket.endpoint_url}/{bucket.bucket}/{generation.storage_name}"
    assert bucket.keys("generated/") == [generation.storage_name]
    assert bucket.object_bytes(generation.storage_name) == render_png(PROMPT)
    served = httpx.get(url, timeout=10)  # as a browser would: a plain GET of the public URL
    assert served.status_code == 200
    assert served.content == render_png(PROMPT)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"custom_domain": "media.example.com"}, "https://media.example.com/{name}"),
        ({"querystring_auth": True, "querystring_expire": 600}, "{endpoint}/{bucket}/{name}?"),
    ],
    ids=["public-domain-is-https", "signed-url"],
)
def test_the_url_is_the_storages(alice_api, alice, bucket, options, expected):
    credits_set(alice, 1)

    with override_settings(STORAGES=bucket.storages(**options)):
        response = alice_api.post(GENERATE, {"prompt": PROMPT, "conversation_id": str(uuid.uuid4())}, format="json")

    assert response.status_code == 200, response.content
    name = ImageGeneration.objects.get(user=alice).storage_name
    url = response.json()["url"]
    assert url.startswith(expected.format(endpoint=bucket.endpoint_url, bucket=bucket.bucket, name=name)), url
    if options.get("querystring_auth"):
        query = urlsplit(url).query
        assert "X-Amz-Expires=600" in query and "X-Amz-Signature=" in query
        assert httpx.get(url, timeout=10).content == render_png(PROMPT)


PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.core.files.storage import default_storage
options = settings.STORAGES["default"].get("OPTIONS", {})
print(json.dumps({"backend": settings.STORAGES["default"]["BACKEND"], "bucket": options.get("bucket_name"),
    "endpoint": options.get("endpoint_url"), "domain": options.get("custom_domain"),
    "url": default_storage.url("generated/x.png")}))
"""


def test_the_environment_chooses_the_storage(settings):
    # Without MEDIA_STORAGE: the filesystem, as every other test here runs (config/settings/test.py).
    assert settings.STORAGES["default"]["BACKEND"] == "django.core.files.storage.FileSystemStorage"
    shared = run_probe(
        PROBE,
        "config.settings.local",
        MEDIA_STORAGE="s3",
        MEDIA_S3_BUCKET="team-media",
        MEDIA_S3_ENDPOINT_URL="https://s3.example.net",
        MEDIA_S3_PUBLIC_DOMAIN="media.example.com",
    )
    assert shared["backend"] == "storages.backends.s3.S3Storage"
    assert (shared["bucket"], shared["endpoint"], shared["domain"]) == (
        "team-media",
        "https://s3.example.net",
        "media.example.com",
    )
    assert shared["url"] == "https://media.example.com/generated/x.png"


@pytest.mark.parametrize(
    ("environment", "refusal"),
    [
        ({"MEDIA_S3_ENDPOINT_URL": "http://s3.example.net"}, "MEDIA_S3_ENDPOINT_URL must be https"),
        ({"MEDIA_S3_BUCKET": ""}, "MEDIA_STORAGE=s3 needs MEDIA_S3_BUCKET"),
    ],
    ids=["plain-http-endpoint", "no-bucket"],
)
def test_production_refuses_a_media_storage_that_cannot_give_https_urls(environment, refusal):
    env = {name: value for name, value in os.environ.items() if name not in DEV_ONLY}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "production-probe-" + "x" * 40,
            "MEDIA_STORAGE": "s3",
            "MEDIA_S3_BUCKET": "team-media",
            **environment,
        }
    )
    env = {name: value for name, value in env.items() if value}
    code = "import django; django.setup()"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert result.returncode != 0
    assert refusal in result.stderr
