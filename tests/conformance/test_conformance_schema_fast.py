"""MCP's schema, fast: ``jsonschema-rs`` lets valid messages through, ``jsonschema`` decides.

:func:`pytest_osfoundry._mcp_schema.first_violation` asks :func:`fast_check` first
and ``jsonschema`` only when the fast check does not call a message valid. These tests
hold the two to one verdict on every message a whole conformance run validates (the
reference server's requests and the suite's answers, in all three revisions) and on
near-valid messages made by Hypothesis (a template with one member dropped or
replaced by any JSON value), and prove that ``jsonschema`` stays the authority and
the fallback.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry import _mcp_schema
from pytest_osfoundry._mcp_schema import REVISIONS, fast_check, first_violation, validator
from tests.conformance.osf_conformance_kit import SuiteRun

Seen = list[tuple[str, str, Any]]

_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x"}}


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """Every (revision, definition, message) :func:`first_violation` is asked about."""
    seen: Seen = []
    real = _mcp_schema.fast_check

    def recording(revision: str, definition: str) -> Callable[[Any], bool] | None:
        check = real(revision, definition)
        assert check is not None, "jsonschema-rs is a dependency: its fast check must load"

        def record(message: Any) -> bool:
            seen.append((revision, definition, copy.deepcopy(message)))
            return check(message)

        return record

    monkeypatch.setattr(_mcp_schema, "fast_check", recording)
    return seen


def test_both_validators_agree_on_every_message_of_a_whole_suite_run(
    recorded: Seen, run_suite: Callable[..., SuiteRun]
) -> None:
    run = run_suite("--osf-target=embedded", "--osf-concurrency=1")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-2000:]
    verdicts: dict[str, set[bool]] = {r: set() for r in REVISIONS}
    for revision, definition, message in recorded:
        fast = fast_check(revision, definition)
        assert fast is not None
        slow = validator(revision, definition).is_valid(message)
        assert fast(message) == slow, (revision, definition, message)
        verdicts[revision].add(slow)
    assert len(recorded) > 300, len(recorded)
    # every revision is in the corpus (its messages are valid: the suite's malformed
    # probes are refused by the server's hand-written checks before the schema; the
    # near-valid messages below are the invalid ones)
    assert all(True in v for v in verdicts.values()), verdicts


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)

_TEMPLATES: list[tuple[str, str, dict[str, Any]]] = [
    ("2025-11-25", "InitializeResult", {**_INIT, "serverInfo": {"name": "x", "version": "1"}}),
    (
        "2025-11-25",
        "CallToolResult",
        {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False},
    ),
    (
        "2025-06-18",
        "CallToolRequest",
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}},
    ),
    (
        "2026-07-28",
        "JSONRPCErrorResponse",
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "no"}},
    ),
]


def _mutate(template: dict[str, Any], path: list[str], value: Any, drop: bool) -> dict[str, Any]:
    message = copy.deepcopy(template)
    node: Any = message
    for key in path[:-1]:
        node = node[key]
    if drop:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return message


def _paths(value: Any, prefix: list[str]) -> list[list[str]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, [*prefix, key])
    return out


@settings(max_examples=300, deadline=None)
@given(
    which=st.integers(0, len(_TEMPLATES) - 1),
    pick=st.integers(0, 1000),
    value=_JSON,
    drop=st.booleans(),
)
def test_both_validators_agree_on_near_valid_messages(
    which: int, pick: int, value: Any, drop: bool
) -> None:
    revision, definition, template = _TEMPLATES[which]
    paths = _paths(template, [])
    message = _mutate(template, paths[pick % len(paths)], value, drop)
    fast = fast_check(revision, definition)
    assert fast is not None
    assert fast(message) == validator(revision, definition).is_valid(message), message


def test_a_valid_message_never_reaches_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(revision: str, definition: str) -> Any:
        raise AssertionError("jsonschema was asked about a message the fast check passed")

    monkeypatch.setattr(_mcp_schema, "validator", refuse)
    valid = {**_INIT, "serverInfo": {"name": "x", "version": "1"}}
    assert first_violation("2025-11-25", "InitializeResult", valid) is None


def test_jsonschema_decides_when_the_fast_check_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mcp_schema, "fast_check", lambda revision, definition: lambda m: False)
    valid = {**_INIT, "serverInfo": {"name": "x", "version": "1"}}
    assert first_violation("2025-11-25", "InitializeResult", valid) is None
    found = first_violation("2025-11-25", "InitializeResult", _INIT)
    assert found is not None and found.message == "'version' is a required property"


def test_without_jsonschema_rs_jsonschema_does_it_all(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # import now fails
    _mcp_schema._fast_registry.cache_clear()
    _mcp_schema.fast_check.cache_clear()
    try:
        assert fast_check("2025-11-25", "InitializeResult") is None
        found = first_violation("2025-11-25", "InitializeResult", _INIT)
        assert found is not None and found.pointer == "/serverInfo"
        valid = {**_INIT, "serverInfo": {"name": "x", "version": "1"}}
        assert first_violation("2025-11-25", "InitializeResult", valid) is None
    finally:
        _mcp_schema._fast_registry.cache_clear()
        _mcp_schema.fast_check.cache_clear()


@pytest.mark.parametrize("value", [10**30, -(2**64), float("nan"), float("inf"), 1.5])
def test_numbers_beyond_64_bits_or_json_are_judged_as_jsonschema_judges(value: Any) -> None:
    message = {"jsonrpc": "2.0", "id": value, "method": "ping"}
    fast = fast_check("2025-11-25", "JSONRPCRequest")
    assert fast is not None
    assert fast(message) == validator("2025-11-25", "JSONRPCRequest").is_valid(message)


def test_an_unknown_definition_is_a_clear_error_on_the_fast_path_too() -> None:
    with pytest.raises(KeyError, match="has no definition 'NoSuchThing'"):
        fast_check("2025-11-25", "NoSuchThing")
