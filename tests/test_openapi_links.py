"""The OpenAPI links (config/schema_links.py, docs/decisions.md#links) lead somewhere real: every link names
an operation of the document, gives it only path parameters it has, and takes each value from a field the
response has (or a path parameter of the request); every create links to the operations on what it made."""

from __future__ import annotations

import re

import pytest
import schemathesis

from config.schema_links import LINKS

pytestmark = pytest.mark.django_db

METHODS = {"get", "put", "post", "patch", "delete"}


@pytest.fixture
def schema(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def operations(schema: dict) -> dict[str, tuple[str, str, dict]]:
    """operationId -> (method, path, operation)."""
    return {
        operation["operationId"]: (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def links(schema: dict):
    """(source operationId, status, link name, link) for every link of the document."""
    for operation_id, (_, _, operation) in operations(schema).items():
        for status, response in operation["responses"].items():
            for name, link in response.get("links", {}).items():
                yield operation_id, status, name, link


def path_parameters(operation: dict) -> set[str]:
    return {parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "path"}


def resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rpartition("/")[2]]
    return node


def field_at(schema: dict, node: dict, tokens: list[str]) -> dict | None:
    """The schema of the value at the JSON pointer `tokens` inside a value of schema `node`, or None when no
    value of that schema has it (an object without the property, a list indexed by a name)."""
    node = resolve(schema, node)
    if not tokens:
        return node
    for branch in (*node.get("allOf", ()), *node.get("oneOf", ()), *node.get("anyOf", ())):
        found = field_at(schema, branch, tokens)
        if found is not None:
            return found
    head, rest = tokens[0], tokens[1:]
    if "items" in node and head.isdigit():
        return field_at(schema, node["items"], rest)
    if head in node.get("properties", {}):
        return field_at(schema, node["properties"][head], rest)
    return None


def types(node: dict) -> list:
    """A schema's `type` as a list (OpenAPI 3.1 writes a nullable string as `["string", "null"]`)."""
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind]


def response_schema(operation: dict, status: str) -> dict:
    return operation["responses"][status]["content"]["application/json"]["schema"]


def test_the_document_has_every_link_of_the_table(schema):
    declared = {(row.source, row.status, target) for row in LINKS for target in row.targets}
    found = {(source, status, link["operationId"]) for source, status, _, link in links(schema)}

    assert declared <= found
    assert len(declared) == sum(len(row.targets) for row in LINKS), "a link is declared twice"


def test_every_link_names_an_operation_of_the_document(schema):
    known = operations(schema)
    unknown = [f"{source} {status} -> {link.get('operationId')}" for source, status, _, link in links(schema)]
    assert [entry for entry in unknown if entry.rpartition(" -> ")[2] not in known] == []


def test_every_link_gives_its_target_every_path_parameter_and_only_those(schema):
    known = operations(schema)
    wrong = []
    for source, status, _, link in links(schema):
        _, path, target = known[link["operationId"]]
        given = {name.removeprefix("path.") for name in link.get("parameters", {})}
        if given != path_parameters(target):
            wrong.append(f"{source} {status} -> {link['operationId']} ({path}): gives {sorted(given)}")
    assert wrong == []


def test_every_body_field_a_link_fills_is_a_field_of_the_targets_request_body(schema):
    known = operations(schema)
    wrong = []
    for source, status, _, link in links(schema):
        if "requestBody" not in link:
            continue
        target = known[link["operationId"]][2]
        body = resolve(schema, target["requestBody"]["content"]["application/json"]["schema"])
        wrong += [
            f"{source} {status} -> {link['operationId']}: {field}"
            for field in link["requestBody"]
            if field not in body.get("properties", {})
        ]
    assert wrong == []


def test_every_expression_points_at_a_field_the_response_has(schema):
    known = operations(schema)
    wrong = []
    for source, status, _, link in links(schema):
        _, _, operation = known[source]
        for parameter, expression in {**link.get("parameters", {}), **link.get("requestBody", {})}.items():
            where = f"{source} {status} -> {link['operationId']} {parameter}={expression}"
            if expression.startswith("$request.path."):
                if expression.removeprefix("$request.path.") not in path_parameters(operation):
                    wrong.append(f"{where}: {source} has no such path parameter")
            elif expression.startswith("$response.body#/"):
                tokens = expression.removeprefix("$response.body#/").split("/")
                field = field_at(schema, response_schema(operation, status), tokens)
                if field is None:
                    wrong.append(f"{where}: the response has no such field")
                elif "string" not in types(field):
                    wrong.append(f"{where}: the field is not a string")
            else:
                wrong.append(f"{where}: neither a response field nor a path parameter")
    assert wrong == []


def test_the_pointer_walker_finds_fields_and_misses_what_is_not_there(schema):
    tasks_list = operations(schema)["tasks_list"][2]
    list_schema = response_schema(tasks_list, "200")

    assert field_at(schema, list_schema, ["items", "0", "id"]) is not None
    assert field_at(schema, list_schema, ["items", "0", "no_such_field"]) is None
    assert field_at(schema, list_schema, ["items", "id"]) is None
    assert field_at(schema, list_schema, ["total", "id"]) is None


def test_every_create_links_to_the_operations_on_what_it_made(schema):
    """A 201 at `P` makes the resource at `P/{id}`: each operation there takes the new `id`."""
    known = operations(schema)
    linked = {(source, link["operationId"]) for source, status, _, link in links(schema) if status == "201"}
    missing = []
    for operation_id, (method, path, operation) in known.items():
        if "201" not in operation["responses"]:
            continue
        item = re.compile(re.escape(path) + r"/\{[a-z_]+\}$")
        for target_id, (_, target_path, _) in known.items():
            if item.match(target_path) and (operation_id, target_id) not in linked:
                missing.append(f"{method.upper()} {path} -> {target_id} ({target_path})")
    assert missing == []


def test_schemathesis_builds_its_state_machine_from_the_links(schema):
    """schemathesis refuses the whole stateful phase when one link is invalid (tests/e2e/test_schemathesis.py)."""
    loaded = schemathesis.openapi.from_dict(schema)

    assert loaded.as_state_machine() is not None
