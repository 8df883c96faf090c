"""A tool's ``inputSchema`` judged (``conformance/_input_schema.py``): ``jsonschema-rs``
answers when its answer is the one a check expects, ``jsonschema`` whenever an answer
would fail a check.

The two are held to one verdict on the reference server's own schemas and on
instances Hypothesis makes; a fast path that lies in either direction never fails a
check; and ``jsonschema`` alone judges what ``jsonschema-rs`` cannot read alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pytest_osfoundry.conformance import _input_schema
from pytest_osfoundry.conformance._input_schema import InputSchema, schema_problem
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer
from pytest_osfoundry.server._tools import tools_listing

SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in tools_listing()}

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=80),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=8,
)


def _near(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects using the schema's own property names (so they come near its rules)."""
    names = [*sorted(schema.get("properties", {})), "extra"]
    return st.dictionaries(st.sampled_from(names), _VALUES | st.uuids().map(str), max_size=4)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_verdict_is_jsonschemas_whatever_was_expected(name: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    instance = data.draw(_near(schema))
    truth = Draft202012Validator(schema).is_valid(instance)
    judged = InputSchema(schema)
    assert judged.accepts(instance, expected=True) is truth
    assert judged.accepts(instance, expected=False) is truth


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_fast_path_is_taken_for_the_reference_servers_schemas(name: str) -> None:
    assert InputSchema(SCHEMAS[name])._fast is not None
    assert schema_problem(SCHEMAS[name]) is None
    assert schema_problem(SCHEMAS[name], as_2020_12=True) is None


def _lying(verdict: bool) -> InputSchema:
    judged = InputSchema(SCHEMAS["get_graph_run"])
    judged._fast = lambda instance: verdict
    return judged


def test_a_fast_path_refusing_everything_never_fails_an_allowed_instance() -> None:
    allowed = {"command_id": "00000000-0000-4000-8000-000000000000"}
    assert _lying(False).accepts(allowed, expected=True) is True


def test_a_fast_path_accepting_everything_never_fails_a_forbidden_instance() -> None:
    assert _lying(True).accepts({"command_id": 5}, expected=False) is False


def test_an_invalid_schema_gets_jsonschemas_message() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "strin"}}}
    problem = schema_problem(schema)
    assert problem is not None
    assert "'strin' is not valid under any of the given schemas" in problem


def test_another_draft_is_judged_by_jsonschema_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fast_path() -> Any:
        raise AssertionError("jsonschema-rs was asked about a draft-07 schema")

    monkeypatch.setattr(_input_schema, "_rs", no_fast_path)
    draft_07 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{}]}
    assert schema_problem(draft_07) is None  # a valid draft-07 tuple
    problem = schema_problem(draft_07, as_2020_12=True)  # not 2020-12's "items"
    assert problem is not None
    assert InputSchema(draft_07)._fast is None


def test_a_pattern_that_does_not_compile_makes_the_schema_invalid() -> None:
    """jsonschema-rs's meta-schema check calls it valid; jsonschema, the authority, does
    not: such a schema never reaches jsonschema-rs."""
    broken = {"type": "object", "properties": {"k": {"type": "string", "pattern": "["}}}
    assert schema_problem(broken) == "'[' is not a 'regex'"
    assert schema_problem(broken, as_2020_12=True) == "'[' is not a 'regex'"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^\\d+$"},
        {"type": "object", "patternProperties": {"^x-": {}}},
        {"$id": "urn:example:tool", "type": "object"},
        {"$defs": {"k": {"type": "string"}}, "$ref": "#/$defs/k"},
        {"type": "object", "properties": {"a": {"$anchor": "a"}}},
    ],
)
def test_regular_expressions_and_uris_are_judged_by_jsonschema_alone(
    monkeypatch: pytest.MonkeyPatch, schema: dict[str, Any]
) -> None:
    def no_fast_path() -> Any:
        raise AssertionError("jsonschema-rs was asked about a schema it may read otherwise")

    monkeypatch.setattr(_input_schema, "_rs", no_fast_path)
    assert schema_problem(schema) is None
    judged = InputSchema(schema)
    assert judged._fast is None
    assert judged.accepts("x", expected=False) is Draft202012Validator(schema).is_valid("x")


def test_a_remote_ref_is_never_fetched() -> None:
    asked: list[str] = []

    def schema_host(request: Request) -> Response:
        asked.append(request.path)
        return Response(200, {"content-type": "application/json"}, b'{"type": "integer"}')

    with LoopbackServer(schema_host) as host:
        judged = InputSchema({"$ref": host.origin + "/schema.json"})
        assert judged._fast is None  # jsonschema-rs would not fetch it: jsonschema judges
        assert schema_problem({"$ref": host.origin + "/schema.json"}) is None
    assert asked == []


def test_without_jsonschema_rs_jsonschema_judges_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_input_schema, "_rs", lambda: None)
    judged = InputSchema(SCHEMAS["get_graph_run"])
    assert judged._fast is None
    assert judged.accepts({"command_id": 5}, expected=False) is False
    assert schema_problem({"type": "strin"}) is not None
