from __future__ import annotations

import gzip
import json
import re

import pytest
from openapi_spec_validator import validate

from tests.support.deploy_check import run_deploy_check
from tests.support.routes import api_routes

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def _operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield method, path, operation


def test_schema_is_a_valid_openapi_3_1_document(schema):
    assert schema["openapi"] == "3.1.0"
    assert schema["info"]["title"] == "Brand Marketing and Task Platform API"
    assert schema["info"]["version"] == "1.0.0"  # the API's version, as in its paths
    validate(schema)


def test_bearer_scheme_is_declared(schema):
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["bearerAuth"]["description"],
    }


def test_every_route_is_in_the_schema():
    from django.test import Client

    schema = Client().get("/openapi.json", secure=True).json()
    documented = {f"{method.upper()} {path}" for method, path, _ in _operations(schema)}

    assert sorted(set(api_routes()) - documented) == []


def test_every_operation_documents_422_and_429(schema):
    for method, path, operation in _operations(schema):
        assert "422" in operation["responses"], f"{method} {path}"
        assert "429" in operation["responses"], f"{method} {path}"
        assert "Retry-After" in operation["responses"]["429"].get("headers", {}) or path == "/health"


def test_public_operations_say_security_empty_and_others_require_bearer(schema):
    public = {
        "/api/v1/auth/register",
        "/api/v1/auth/token",
        "/api/v1/auth/token/refresh",
        "/api/v1/auth/password/reset",
        "/api/v1/auth/password/reset/confirm",
        "/health",
    }
    for method, path, operation in _operations(schema):
        if path in public:
            assert operation["security"] == [], f"{method} {path}"
        elif not path.startswith(
            ("/api/v1/brief", "/api/v1/signature", "/api/v1/webhooks/payments", "/api/v1/connected-accounts/oauth")
        ):
            assert operation["security"] == [{"bearerAuth": []}], f"{method} {path}"


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_load_only_local_assets(api, page):
    response = api.get(page)

    assert response.status_code == 200
    html = response.content.decode()
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    assert urls, "the page references its assets"
    assert [u for u in urls if re.match(r"^(https?:)?//", u)] == []
    for asset in (u for u in urls if u.startswith("/static/")):
        assert api.get(asset).status_code == 200, asset


def test_swagger_ui_does_not_call_the_outside_validator(api):
    html = api.get("/docs").content.decode()
    script_urls = re.findall(r"""src\s*=\s*["']([^"']+swagger-ui-init[^"']*)["']""", html)
    init = api.get(script_urls[0]).content.decode() if script_urls else html

    assert '"validatorUrl": null' in init


def test_operations_with_a_body_document_413_and_415(schema):
    for method, path, operation in _operations(schema):
        if method in ("post", "put", "patch"):
            assert {"413", "415"} <= set(operation["responses"]), f"{method} {path}"


def test_schema_generates_without_warnings(tmp_path):
    """`make serve` refuses to start on any system-check warning, drf-spectacular's among them. (Whether the
    document is valid OpenAPI 3.1 is test_schema_is_a_valid_openapi_3_1_document's: the served one, checked
    with openapi-spec-validator; `--validate` here checked the same again, 13 s of CPU.)"""
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


def test_the_deploy_check_make_serve_runs_passes():
    """scripts/serve.sh runs exactly this before migrating; a warning there stops the production shape. As the
    e2e harness runs `make serve`: on the local stand-ins, by their opt-ins."""
    result = run_deploy_check(
        PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
    )

    assert result.returncode == 0, result.stdout + result.stderr


# --- Fast docs: compact, compressed, cacheable, generated once (see docs/decisions.md#api-documents) ------


def test_the_document_is_compact_and_gzip_compressed_when_accepted(api):
    plain = api.get("/openapi.json")
    zipped = api.get("/openapi.json", HTTP_ACCEPT_ENCODING="gzip, deflate, br")

    assert plain.status_code == 200 and "Content-Encoding" not in plain
    assert b"\n" not in plain.content  # no indentation (a newline in a string is escaped)
    assert zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"]
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) < len(plain.content) / 5


def test_the_document_has_a_strong_etag_per_encoding_and_answers_304(api):
    plain = api.get("/openapi.json")
    zipped = api.get("/openapi.json", HTTP_ACCEPT_ENCODING="gzip")

    assert re.fullmatch(r'"[0-9a-f]{32}"', plain["ETag"])
    assert zipped["ETag"] != plain["ETag"] and not zipped["ETag"].startswith("W/")
    again = api.get("/openapi.json", HTTP_IF_NONE_MATCH=plain["ETag"])
    assert again.status_code == 304 and again.content == b""
    assert api.get("/openapi.json", HTTP_IF_NONE_MATCH='"other"').status_code == 200
    assert api.get("/openapi.json", HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=zipped["ETag"]).status_code == 304


def test_the_document_is_generated_once_per_process(api, monkeypatch):
    from drf_spectacular.generators import SchemaGenerator

    from core.api import openapi_view

    openapi_view._clear()
    calls = []
    original = SchemaGenerator.get_schema
    monkeypatch.setattr(SchemaGenerator, "get_schema", lambda self, **kw: calls.append(1) or original(self, **kw))

    first = api.get("/openapi.json").content
    assert api.get("/openapi.json").content == first
    assert api.get("/openapi.json", HTTP_HOST="localhost").json()["servers"] == [
        {"url": "https://localhost", "description": "This server"}
    ]
    assert len(calls) == 1


def test_every_operation_has_a_summary_and_a_description_of_its_own(schema):
    descriptions: dict[str, str] = {}
    for method, path, operation in _operations(schema):
        name = f"{method.upper()} {path}"
        assert operation.get("summary", "").strip(), f"{name} has no summary"
        description = operation.get("description", "").strip()
        assert description, f"{name} has no description"
        assert "Subclasses" not in description, f"{name} shows a base class's docstring"
        assert description not in descriptions, f"{name} repeats the description of {descriptions.get(description)}"
        descriptions[description] = name


# --- Types clients can trust -----------------------------------------------------------------------


def _component(schema, name):
    return schema["components"]["schemas"][name]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("Task", ["status", "category", "completed_at", "cancelled_at", "budget_currency"]),
        ("Bid", ["status", "judge_status", "judge_score", "currency"]),
        ("Payment", ["status", "checkout_url"]),
        ("Delivery", ["status"]),
        ("Team", ["status"]),
    ],
)
def test_fields_always_in_a_response_are_required(schema, name, fields):
    component = _component(schema, name)
    assert set(fields) <= set(component.get("required", [])), name


def test_every_field_of_a_response_component_is_required(schema):
    """DRF renders every field of a serializer; only one declared `required=False` may be left out."""
    request_names = {
        ref.rsplit("/", 1)[1]
        for _, _, operation in _operations(schema)
        for content in operation.get("requestBody", {}).get("content", {}).values()
        for ref in re.findall(r'"\$ref": "([^"]+)"', json.dumps(content))
    }
    optional = {
        name: sorted(set(component["properties"]) - set(component.get("required", [])))
        for name, component in schema["components"]["schemas"].items()
        if component.get("type") == "object"
        and "properties" in component
        and name not in request_names
        and not name.endswith("Request")
    }
    assert {name for name, fields in optional.items() if fields} == _DECLARED_OPTIONAL


# Response shapes rendered from stored JSON, whose fields are declared `required=False` (a key the stored
# object lacks is left out), and the validation error item (`input`, `ctx` as Pydantic sends them).
_DECLARED_OPTIONAL = {"Attachment", "BrandClassification", "SocialLinks", "ValidationErrorItem"}


def test_money_is_a_decimal_string_out_and_a_string_or_number_in(schema):
    out = _component(schema, "Task")["properties"]["budget_amount"]
    assert out["type"] == "string" and out["format"] == "decimal"
    assert re.fullmatch(out["pattern"], "12.50") and not re.fullmatch(out["pattern"], "12.5")

    body = _component(schema, "TaskInputRequest")["properties"]["budget_amount"]
    text, number = body["oneOf"]
    assert (text["type"], text["format"], number["type"]) == ("string", "decimal", "number")
    assert number["exclusiveMinimum"] == 0 and number["maximum"] == 1_000_000
    for good in ("0.01", "12.5", "12.50", "999999.99", "1000000"):
        assert re.fullmatch(text["pattern"], good), good
    for bad in ("0", "0.00", "-1", "12.345", "1000001", "1e3", ""):
        assert not re.fullmatch(text["pattern"], bad), bad
    assert "decimal string" in body["description"] and "JSON number" in body["description"]


def test_money_is_accepted_as_a_string_or_a_number_and_answered_as_a_string(alice_api):
    from tests.tasks_market.conftest import post_task

    for amount in ("12.50", 12.5):
        assert post_task(alice_api, budget_amount=amount)["budget_amount"] == "12.50"


def test_closed_sets_are_enums_shared_by_requests_and_responses(schema):
    def ref(prop):
        options = prop.get("oneOf") or prop.get("allOf") or [prop]
        return next((o["$ref"].rsplit("/", 1)[1] for o in options if "$ref" in o and "Null" not in o["$ref"]), None)

    assert ref(_component(schema, "Task")["properties"]["budget_currency"]) == "CurrencyEnum"
    assert ref(_component(schema, "TaskInputRequest")["properties"]["budget_currency"]) == "CurrencyEnum"
    assert ref(_component(schema, "Bid")["properties"]["currency"]) == "CurrencyEnum"
    assert ref(_component(schema, "Bid")["properties"]["judge_status"]) == "JudgementStatusEnum"
    assert ref(_component(schema, "BidJudgement")["properties"]["status"]) == "JudgementStatusEnum"
    enums: dict[tuple, str] = {}
    for name, component in schema["components"]["schemas"].items():
        if "enum" in component:
            values = tuple(sorted(map(str, component["enum"])))
            assert values not in enums, f"{name} repeats {enums.get(values)}"
            enums[values] = name


def test_request_bodies_forbid_unknown_fields_except_the_providers_webhook(schema):
    for method, path, operation in _operations(schema):
        for content in operation.get("requestBody", {}).get("content", {}).values():
            name = content["schema"]["$ref"].rsplit("/", 1)[1]
            expected = None if path == "/api/v1/webhooks/payments" else False
            assert _component(schema, name).get("additionalProperties") is expected, f"{method} {path}"


def test_creates_document_their_location_header(schema):
    for method, path, operation in _operations(schema):
        if "201" in operation["responses"]:
            assert operation["responses"]["201"]["headers"]["Location"]["required"] is True, f"{method} {path}"


# --- The schema says what the server checks (docs/decisions.md#api-documents) ----------------------


def test_the_version_is_the_apis_as_its_paths_say(schema):
    major = schema["info"]["version"].split(".")[0]
    assert all(path.startswith(f"/api/v{major}/") for path in schema["paths"] if path.startswith("/api/"))


def test_a_bids_eta_hours_has_the_bounds_the_server_checks(schema):
    said = _component(schema, "Bid")["properties"]["eta_hours"]
    checked = _component(schema, "BidInputRequest")["properties"]["eta_hours"]

    assert said == checked == {"type": "integer", "minimum": 1, "maximum": 8760}


def test_a_payments_provider_is_one_of_the_payment_providers(schema):
    from payments.providers import PROVIDERS

    assert _component(schema, "PaymentProviderEnum")["enum"] == list(PROVIDERS) == ["local", "stripe"]
    for name in ("Payment", "CreditTopUpPayment", "PayoutAccount"):
        provider = _component(schema, name)["properties"]["provider"]
        provider = provider.get("allOf", [provider])[0]  # a read-only field wraps its $ref
        assert provider == {"$ref": "#/components/schemas/PaymentProviderEnum"}, name


def _descriptions(node):
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            yield node["description"]
        for value in node.values():
            yield from _descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _descriptions(value)


def test_enum_descriptions_list_labels_only_when_they_say_more_than_the_values(schema):
    def letters(text):
        return re.sub(r"[\W_]+", "", text.lower())

    for description in _descriptions(schema):
        labels = re.findall(r"^\* `([^`]*)` - (.*)$", description, re.MULTILINE)
        assert not labels or any(letters(value) != letters(label) for value, label in labels), description
    assert "description" not in _component(schema, "CurrencyEnum")  # it said "* `usd` - usd", ...
    assert "description" not in _component(schema, "TaskStatusEnum")
    assert "* `refund_full` - Refund the poster in full" in _component(schema, "OutcomeEnum")["description"]


def test_no_component_has_a_field_named_like_itself(schema):
    """A model generated by openapi-python-client keeps its instance in a variable named after the model, which
    would shadow a field of the same name (`taglines = cls(taglines=taglines)`); mypy refuses such a client."""
    clashes = [
        f"{name}.{field}"
        for name, component in schema["components"]["schemas"].items()
        for field in component.get("properties", {})
        if field.replace("_", "").lower() == name.lower()
    ]
    assert clashes == []
    assert "taglines" in _component(schema, "SignatureTaglines")["properties"]


def test_a_body_the_server_cannot_go_without_is_required(schema):
    """A body with no required field but rules across fields (at least one of two lists) is refused when
    absent, so it is required: a generated client may not leave it out (and call `to_dict()` on `Unset`)."""
    members = "/api/v1/brands/{brand_id}/brand-intelligence/tracked-groups/{group_id}/members"
    assert schema["paths"][members]["post"]["requestBody"]["required"] is True
    for method, path, operation in _operations(schema):
        for content in operation.get("requestBody", {}).get("content", {}).values():
            component = _component(schema, content["schema"]["$ref"].rsplit("/", 1)[1])
            branches = component.get("anyOf") or component.get("oneOf") or []
            if component.get("required") or (branches and all(b.get("required") for b in branches)):
                assert operation["requestBody"].get("required") is True, f"{method} {path}"


def test_an_absent_members_body_is_refused(alice, alice_api):
    from tests.brands.factories import BrandFactory

    groups = f"/api/v1/brands/{BrandFactory(owner=alice).id}/brand-intelligence/tracked-groups"
    group = alice_api.post(groups, {"name": "Rivals"}).json()

    response = alice_api.post(f"{groups}/{group['id']}/members")

    assert response.status_code == 422, response.content
