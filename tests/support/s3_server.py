"""An S3-compatible stand-in on 127.0.0.1: moto's server in a thread of the test process (ThreadedMotoServer).

It speaks S3's HTTP API (PUT, GET, HEAD of objects; buckets), so django-storages' S3 backend talks to it as to
any S3-compatible store; a plain GET of an object's path-style URL serves its bytes, as a public bucket does
(its bucket policy lets anyone read; only the keys write).
Used by tests/assistant/test_image_storage.py and the multi-node test (both nodes share one bucket).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import boto3
from botocore.config import Config

ACCESS_KEY, SECRET_KEY, REGION = "stand-in-key", "stand-in-secret", "us-east-1"


@dataclass(frozen=True)
class S3StandIn:
    endpoint_url: str
    bucket: str

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(s3={"addressing_style": "path"}, connect_timeout=5, read_timeout=10),
        )

    def object_bytes(self, key: str) -> bytes:
        return self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client().list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def env(self) -> dict[str, str]:
        """The settings' environment (docs/operations.md#media-storage) that points a node at this bucket."""
        return {
            "MEDIA_STORAGE": "s3",
            "MEDIA_S3_BUCKET": self.bucket,
            "MEDIA_S3_ENDPOINT_URL": self.endpoint_url,
            "MEDIA_S3_REGION": REGION,
            "MEDIA_S3_ACCESS_KEY_ID": ACCESS_KEY,
            "MEDIA_S3_SECRET_ACCESS_KEY": SECRET_KEY,
        }

    def storages(self, **options) -> dict:
        """STORAGES as config/settings/base.py builds them from env() (for override_settings)."""
        return {
            "default": {
                "BACKEND": "storages.backends.s3.S3Storage",
                "OPTIONS": {
                    "bucket_name": self.bucket,
                    "endpoint_url": self.endpoint_url,
                    "region_name": REGION,
                    "access_key": ACCESS_KEY,
                    "secret_key": SECRET_KEY,
                    "url_protocol": "https:",
                    "querystring_auth": False,
                    "file_overwrite": False,
                    "client_config": Config(s3={"addressing_style": "path"}, signature_version="s3v4"),
                    **options,
                },
            },
            "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
        }


@contextmanager
def s3_stand_in(bucket: str = "media") -> Iterator[S3StandIn]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        stand_in = S3StandIn(endpoint_url=f"http://{host}:{port}", bucket=bucket)
        client = stand_in.client()
        client.create_bucket(Bucket=bucket)
        # Anyone may read an object, as a bucket behind a public domain or CDN is set up (writes need the keys).
        public_read = {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{bucket}/*",
        }
        client.put_bucket_policy(
            Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [public_read]})
        )
        yield stand_in
    finally:
        server.stop()
