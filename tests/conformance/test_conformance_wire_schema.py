"""The wire-schema checks (R1-wire-schema-*): MCP's own schema judges every answer."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pytest_osfoundry._mcp_schema import REVISIONS, first_violation, validator
from pytest_osfoundry.conformance.server._wire_schema import (
    SchemaLedger,
    SchemaWatch,
    judge,
    revision_of,
)
from pytest_osfoundry.http import Response
from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_wire import WIRE_VARIANTS

MODULE = "tests.conformance.variants_wire"


@pytest.mark.parametrize("name", sorted(WIRE_VARIANTS))
def test_each_schema_broken_variant_fails_exactly_its_wire_check(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    variant = WIRE_VARIANTS[name]
    run = run_suite(f"--osf-target=embedded:{MODULE}:{name}")
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == variant.fails, run.text[-3000:]
    (check,) = [c for c in run.report["checks"] if c["outcome"] == "failed"]
    assert "break MCP's schema: the " in check["message"]
    assert " at /" in check["message"] and "schema #" in check["message"]
    exchange = check["exchange"]  # the answer that broke the schema, attached
    assert exchange is not None and exchange["decisive"]["response"]["status"] in (200, 400, 404)
    assert exchange["decisive"]["request"]["body"] and exchange["curl"].startswith("curl ")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED


def test_every_wire_check_has_a_variant_that_fails_it(default_ids: set[str]) -> None:
    wire = {i for i in default_ids if i.startswith("R1-wire-schema-")}
    caught = set().union(*(v.fails for v in WIRE_VARIANTS.values()))
    assert wire == {
        f"R1-wire-schema-{f}"
        for f in ("initialize", "tools-list", "tools-call", "error", "discover")
    }
    assert wire - caught == {"R1-wire-schema-discover"}  # discover: see the next test


def test_a_discover_answer_breaking_the_schema_is_named() -> None:
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"]}}
    found = judge("2026-07-28", "server/discover", answer)
    assert found is not None and found.pointer == "/result"
    assert "is a required property" in found.message
    assert found.schema_path.startswith("DiscoverResultResponse/")


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_bundled_schema_is_a_valid_schema(revision: str) -> None:
    check = validator(revision, "JSONRPCRequest")
    type(check).check_schema(check.schema)


def test_a_violation_names_the_pointer_and_the_schema_path() -> None:
    found = first_violation(
        "2025-11-25",
        "InitializeResult",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x"}},
    )
    assert found is not None
    assert found.pointer == "/serverInfo"
    assert found.message == "'version' is a required property"
    assert found.schema_path == "InitializeResult/properties/serverInfo/required"
    assert "at /serverInfo: 'version' is a required property (MCP 2025-11-25" in found.describe()


def test_an_unknown_revision_or_definition_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no MCP schema for revision '2024-11-05'"):
        validator("2024-11-05", "InitializeResult")
    with pytest.raises(KeyError, match="has no definition 'NoSuchThing'"):
        validator("2025-11-25", "NoSuchThing")


def test_the_revision_is_the_header_or_what_initialize_negotiated() -> None:
    assert (
        revision_of({"MCP-Protocol-Version": "2025-06-18"}, {"method": "tools/list"}, {})
        == "2025-06-18"
    )
    init = {"method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    assert revision_of({}, init, {"result": {"protocolVersion": "2025-06-18"}}) == "2025-06-18"
    assert revision_of({}, init, {"result": {}}) == "2025-11-25"
    assert revision_of({"mcp-protocol-version": "v9"}, {"method": "tools/list"}, {}) is None


def _watched(body: bytes, ctype: str = "application/json") -> SchemaLedger:
    ledger = SchemaLedger()

    class Fixed:
        def request(self, method: str, url: str, headers: object, sent: bytes) -> Response:
            return Response(200, {"content-type": ctype}, body)

    watch = SchemaWatch(Fixed(), ledger)
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    headers = {"MCP-Protocol-Version": "2025-11-25"}
    watch.request("POST", "http://127.0.0.1/mcp", headers, json.dumps(request).encode())
    return ledger


def test_the_watch_judges_json_and_event_stream_answers_and_skips_non_json_rpc() -> None:
    good = {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}
    bad = {"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "x", "inputSchema": {}}]}}
    assert _watched(json.dumps(good).encode()).judged == {"tools-list": 1}
    ledger = _watched(f"event: message\ndata: {json.dumps(bad)}\n\n".encode(), "text/event-stream")
    assert ledger.broken == {"tools-list": 1}
    assert ledger.findings["tools-list"][0].violation.pointer == "/result/tools/0/inputSchema"
    assert _watched(b'{"error": "invalid_token"}').judged == {}  # an OAuth body, not JSON-RPC
    assert _watched(b"<html>").judged == {}


def test_requests_that_are_no_json_rpc_call_are_left_alone() -> None:
    ledger = SchemaLedger()

    class Fixed:
        def request(self, method: str, url: str, headers: object, sent: bytes) -> Response:
            return Response(200, {"content-type": "application/json"}, b'{"jsonrpc":"1"}')

    watch = SchemaWatch(Fixed(), ledger)
    watch.request("GET", "http://127.0.0.1/mcp", {}, b"")
    watch.request(
        "POST", "http://127.0.0.1/mcp", {}, b'{"jsonrpc":"2.0","method":"notifications/x"}'
    )
    assert ledger.judged == {}


def test_a_preflight_answer_that_is_not_json_rpc_is_one_line_naming_the_field(
    run_suite: Callable[..., SuiteRun],
) -> None:
    run = run_suite(f"--osf-target=embedded:{MODULE}:jsonrpc_2_everywhere")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.text[-2000:]
    lines = [ln for ln in run.text.splitlines() if ln.startswith("ERROR:")]
    assert len(lines) == 1 and '"jsonrpc": "2.0"' in lines[0], lines
    assert run.report["summary"]["ok"] is False


def test_an_error_answered_with_a_null_id_is_accepted() -> None:
    """JSON-RPC 2.0's ``"id": null`` (an SDK's Host guard, say) is no schema violation;
    a wrongly typed id, or a broken error object beside a null id, still is."""
    error = {"code": -32000, "message": "Invalid Host: evil.example"}
    null_id = {"jsonrpc": "2.0", "error": error, "id": None}
    assert _watched(json.dumps(null_id).encode()).broken == {}
    assert _watched(json.dumps(null_id).encode()).judged == {"error": 1}
    wrong_id = {"jsonrpc": "2.0", "error": error, "id": ["7"]}
    assert _watched(json.dumps(wrong_id).encode()).broken == {"error": 1}
    bad_code = {"jsonrpc": "2.0", "error": {"code": "x", "message": "m"}, "id": None}
    assert _watched(json.dumps(bad_code).encode()).broken == {"error": 1}
