"""One `make serve` node (web + worker) with metrics and traces on, and the local receivers that watch it.

Shared by tests/ops/test_metrics.py and tests/ops/test_tracing.py: the node is started once per run (the
two modules are one xdist group, tests/conftest.py; the fixture is in tests/ops/conftest.py). Its
environment is what an operator sets:
METRICS_PORT / METRICS_WORKER_PORT (docs/operations.md#metrics-and-traces) and the standard
OTEL_EXPORTER_OTLP_ENDPOINT, here a tiny OTLP/HTTP receiver in this process. `Prometheus` runs Debian's
`prometheus` against any list of targets, so the same helpers serve a multi-node setup.
"""

from __future__ import annotations

import gzip
import secrets
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.e2e.harness import ROOT, Server, _base_env, _testenv, free_port, lift_rate_limits


class OtlpReceiver:
    """An OTLP/HTTP trace receiver: decodes each ExportTraceServiceRequest (opentelemetry-proto) into spans."""

    def __init__(self):
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[dict] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    service = next(
                        (a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"),
                        "",
                    )
                    pid = next(
                        (a.value.int_value for a in resource_spans.resource.attributes if a.key == "process.pid"), 0
                    )
                    for scope in resource_spans.scope_spans:
                        for span in scope.spans:
                            with receiver.lock:
                                receiver.spans.append(
                                    {
                                        "trace_id": span.trace_id.hex(),
                                        "name": span.name,
                                        "kind": span.kind,
                                        "scope": scope.scope.name,
                                        "service": service,
                                        "pid": pid,
                                    }
                                )
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def snapshot(self) -> list[dict]:
        with self.lock:
            return list(self.spans)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class ObservedNode:
    server: Server
    otlp: OtlpReceiver
    web_metrics: str  # host:port of the web role's exporter
    worker_metrics: str  # host:port of the worker's exporter
    workdir: Path
    notes: list[str] = field(default_factory=list)


@contextmanager
def start_observed_node() -> Iterator[ObservedNode]:
    """The node, its databases and its receiver; everything stopped on exit (tests/ops/conftest.py's fixture)."""
    testenv = _testenv()
    workdir = Path(tempfile.mkdtemp(prefix="ops-observed-"))
    otlp = OtlpReceiver()
    with testenv.postgres() as database_url, testenv.redis() as redis_url:
        var_dir = workdir / "var"
        var_dir.mkdir()
        web_port, worker_port = free_port(), free_port()
        env = _base_env(var_dir)
        env.update(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            WEB_CONCURRENCY="2",
            CELERY_CONCURRENCY="2",
            SERVE_ROLES="web,worker",
            SERVE_RELEASE="1",
            METRICS_PORT=str(web_port),
            METRICS_WORKER_PORT=str(worker_port),
            OTEL_EXPORTER_OTLP_ENDPOINT=otlp.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="200",  # ms: spans reach the receiver while the test waits
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        )
        url = urlsplit(database_url)
        createdb = [f"{testenv.postgres_bindir()}/createdb", "-h", "127.0.0.1", "-p", str(url.port), "-U", "postgres"]
        subprocess.run([*createdb, url.path[1:]], check=True, capture_output=True)
        # The run's migrated database (scripts/testenv.py), migrated without the node's exporters.
        quiet = {key: value for key, value in env.items() if not key.startswith(("OTEL_", "METRICS_"))}
        testenv.migrated_postgres(database_url, quiet)
        server = Server("serve", free_port(), env, var_dir, workdir / "server.log")
        try:
            server.start()
            lift_rate_limits(server)
            yield ObservedNode(server, otlp, f"127.0.0.1:{web_port}", f"127.0.0.1:{worker_port}", workdir)
        finally:
            server.stop()
            otlp.close()


def traffic(node: ObservedNode, seconds: float) -> dict[str, int]:
    """A few seconds of requests: reads (/health) and password-reset requests (each queues a Celery task)."""
    counts = {"health": 0, "reset": 0}
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=node.server.base_url, verify=False, timeout=30) as client:
        while time.monotonic() < deadline:
            assert client.get("/health").status_code == 200
            counts["health"] += 1
            if counts["health"] % 5 == 0:
                email = f"metrics-{secrets.token_hex(4)}@example.com"
                answer = client.post("/api/v1/auth/password/reset", json={"email": email})
                assert answer.status_code == 202, answer.text
                counts["reset"] += 1
    return counts


class Prometheus:
    """Debian's `prometheus` scraping the given targets every second, with docs/alerts.yml loaded."""

    def __init__(self, workdir: Path, jobs: dict[str, list[str]]):
        self.port = free_port()
        self.workdir = workdir
        config = workdir / "prometheus.yml"
        lines = [
            "global: {scrape_interval: 1s, evaluation_interval: 1s}",
            f"rule_files: [{ROOT / 'docs' / 'alerts.yml'}]",
            "scrape_configs:",
        ]
        for job, targets in jobs.items():
            lines += [f"  - job_name: {job}", f"    static_configs: [{{targets: [{', '.join(targets)}]}}]"]
        config.write_text("\n".join(lines) + "\n")
        self.log = workdir / "prometheus.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [
                    _testenv().prometheus_binary(),
                    f"--config.file={config}",
                    f"--storage.tsdb.path={workdir / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.api = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=10)
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if self.api.get("/-/ready").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "prometheus never became ready:\n" + self.log.read_text()
            time.sleep(0.2)

    def query(self, promql: str) -> list[dict]:
        answer = self.api.get("/api/v1/query", params={"query": promql})
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["result"]

    def wait_for(self, promql: str, accept, timeout: float = 30) -> list[dict]:
        """Poll an instant query until `accept(result)` holds; the last result either way."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(promql)
            if accept(result) or time.monotonic() > deadline:
                return result
            time.sleep(0.5)

    def stop(self) -> None:
        self.api.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
