"""One path for the wire, held by reading the package's source (issue 44, item 2).

Each job below is done in one place; a second copy would drift from the first (the
JSON-RPC request was once framed in six places, the Accept value written four times,
three ``origin_of`` meant three things). These tests read every module of
``pytest_osfoundry/`` and name any file that does the job again:

* a JSON-RPC request is written by ``client/_jsonrpc.request_body`` only, and the
  ``Accept`` value of an MCP request is its ``ACCEPT`` -- in the rule book too, whose
  checks frame theirs with the suite's public ``rpc_body`` and ``legacy_headers``;
* a JSON text is written by ``_wirejson.dumps`` only: ``json.dumps`` (or a
  ``JSONEncoder``) elsewhere only where :data:`JSON_NOT_ON_THE_WIRE` says why it is
  no body the kit sends;
* the transport reads bytes: ``client/_http_transport.py`` names no JSON-RPC id;
* the relay client and the relay driver's client send through ``json_call`` only;
* one ``origin_of``, one percentile, one table writer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_osfoundry"
SOURCES = {
    path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
    for path in sorted(PACKAGE.rglob("*.py"))
}
RULE_BOOK = {
    path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
    for path in sorted((ROOT / "conformance").rglob("*.py"))
}

#: Where JSON is written that is no body the kit sends, and why.
JSON_NOT_ON_THE_WIRE: dict[str, str] = {
    "server/_state.py": "canonical JSON (keys sorted) of a tool call's arguments, compared, "
    "never sent",
    "_masking.py": "a secret as JSON escapes it, so masking finds it in a body",
    "relay/_outbox.py": "the file outbox on disk (D17)",
    "relay/_cli.py": "a line printed for the person at the terminal",
    "_cli.py": "a line printed for the person at the terminal",
    "sim/_cli.py": "the simulator's figures printed as JSON",
    "load/_accounting.py": "the accounting's JSON report file",
    "load/_accounts.py": "the accounts file on disk (0600)",
    "conformance/reporting/_results.py": "the JSON report file",
    "conformance/plugin/_makereport.py": "a report's data masked as text, then read back",
    "conformance/relay/_evidence.py": "a relay check's evidence: the request shown, the file",
}


def _calls(tree: ast.AST) -> Iterator[ast.Call]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.Call))


def _dotted(node: ast.expr) -> str:
    """``json.dumps`` for ``json.dumps``, ``dumps`` for ``dumps``, ``""`` otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _writes_json(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` writes JSON with the standard library."""
    from_json = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "json"
        for alias in node.names
        if alias.name in ("dumps", "dump", "JSONEncoder")
    }
    named = {"json.dumps", "json.dump", "json.JSONEncoder"} | from_json
    return [call.lineno for call in _calls(tree) if _dotted(call.func) in named]


def _dict_keys(node: ast.Dict) -> set[str]:
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_the_scan_reads_the_package() -> None:
    assert len(SOURCES) > 100 and "client/_jsonrpc.py" in SOURCES


def test_json_is_written_by_wirejson_alone() -> None:
    found = {path: _writes_json(tree) for path, tree in SOURCES.items() if path != "_wirejson.py"}
    wrong = [
        f"pytest_osfoundry/{path}:{line}"
        for path, lines in found.items()
        if path not in JSON_NOT_ON_THE_WIRE
        for line in lines
    ]
    assert wrong == [], "write bodies with pytest_osfoundry._wirejson.dumps:\n" + "\n".join(wrong)
    stale = [path for path in JSON_NOT_ON_THE_WIRE if not found.get(path)]
    assert stale == [], f"drop these from JSON_NOT_ON_THE_WIRE: {stale}"


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("import json\nbody = json.dumps(x).encode()\n", [2]),
        ("from json import dumps as d\nbody = d(x)\n", [2]),
        ("import json\nw = json.JSONEncoder(separators=(',', ':')).encode\n", [2]),
        ("from pytest_osfoundry._wirejson import dumps\nbody = dumps(x)\n", []),
    ],
)
def test_the_json_scan_sees_each_spelling(source: str, lines: list[int]) -> None:
    assert _writes_json(ast.parse(source)) == lines


def test_a_json_rpc_request_is_written_in_one_place() -> None:
    """A dict literal with ``jsonrpc`` and ``method`` is a request being framed; the
    server's ``_request`` is the request it read, as MCP's schema sees it (never sent)."""
    allowed = {"client/_jsonrpc.py", "server/_mcp.py"}
    wrong = [
        f"pytest_osfoundry/{path}:{node.lineno}"
        for path, tree in SOURCES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict) and {"jsonrpc", "method"} <= _dict_keys(node)
        if path not in allowed
    ]
    assert wrong == [], "frame requests with client/_jsonrpc.request_body:\n" + "\n".join(wrong)
    raw = [
        f"pytest_osfoundry/{path}:{node.lineno}"
        for path, tree in SOURCES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
        if _text(node.value).find('"jsonrpc"') >= 0
        and path != "client/_jsonrpc.py"
        and not _is_docstring(tree, node)
    ]
    assert raw == [], "a request written by hand:\n" + "\n".join(raw)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _is_docstring(tree: ast.AST, node: ast.Constant) -> bool:
    for owner in ast.walk(tree):
        if isinstance(owner, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = owner.body
            if body and isinstance(body[0], ast.Expr) and body[0].value is node:
                return True
    return False


def test_the_accept_value_is_written_once() -> None:
    found = [
        f"pytest_osfoundry/{path}:{node.lineno}"
        for path, tree in SOURCES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if "text/event-stream" in node.value and "application/json," in node.value
        and not _is_docstring(tree, node)
    ]
    assert found == ["pytest_osfoundry/client/_jsonrpc.py:" + found[0].rsplit(":", 1)[1]], found


def test_the_transport_reads_bytes_not_json_rpc_ids() -> None:
    names = {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(SOURCES["client/_http_transport.py"])
        if isinstance(node, (ast.Name, ast.Attribute))
    }
    knows = names & {"AnswerWatch", "request_id_of", "id_of_request", "read_answer", "id_matches"}
    assert knows == set(), "the JSON-RPC answer's end is the transport's stream_end"


@pytest.mark.parametrize("path", ["client/_relay_client.py", "relay/_driver_seams.py"])
def test_the_relay_clients_send_json_through_one_call(path: str) -> None:
    sent = [c.lineno for c in _calls(SOURCES[path]) if _dotted(c.func).endswith(".request")]
    called = [c.lineno for c in _calls(SOURCES[path]) if _dotted(c.func) == "json_call"]
    assert sent == [] and called, f"{path}: send with client/_transport.json_call"


def _defined(predicate: str) -> list[str]:
    return sorted(
        f"{path}:{fn.name}"
        for path, tree in SOURCES.items()
        for fn in _functions(tree)
        if predicate in fn.name.lower()
    )


def test_one_origin_of() -> None:
    assert _defined("origin_of") == ["_origin.py:origin_of"] * 3  # two overloads, one body


def test_one_percentile() -> None:
    """The load's nearest rank (``Latencies.percentile`` hands its counts to it); the
    simulator's linear interpolation is named apart (``sim/_stats.interpolated``)."""
    assert _defined("percentile") == ["load/_ledger.py:percentile"] * 2
    assert _defined("quantile") == []


def test_one_table_writer() -> None:
    """Markdown tables' rule rows and padded columns are written by ``_tables`` only."""
    wrong = [
        f"pytest_osfoundry/{path}:{node.lineno}"
        for path, tree in SOURCES.items()
        if path != "_tables.py"
        for node in ast.walk(tree)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "|---" in node.value
            and not _is_docstring(tree, node)
        )
        or (isinstance(node, ast.Call) and _dotted(node.func).endswith(("ljust", "rjust")))
    ]
    assert wrong == [], "write tables with pytest_osfoundry._tables:\n" + "\n".join(wrong)


def test_the_rule_book_frames_requests_with_the_public_writer() -> None:
    """A check bends a request's headers, URL or session, not its framing: it writes
    the body with ``rpc_body`` (a deliberately broken body is bytes, not a dict)."""
    assert len(RULE_BOOK) > 20
    wrong = [
        f"{path}:{node.lineno}"
        for path, tree in RULE_BOOK.items()
        for node in ast.walk(tree)
        if (isinstance(node, ast.Dict) and {"jsonrpc", "method"} <= _dict_keys(node))
        or (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "text/event-stream" in node.value
            and "application/json," in node.value
        )
    ]
    assert wrong == [], "use rpc_body / legacy_headers:\n" + "\n".join(wrong)
