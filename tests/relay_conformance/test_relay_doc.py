"""docs/relay-conformance.md says what the kit does: read from the page itself (issue 43).

The page is the one a relay team reads instead of the kit's source, so what can be
checked mechanically is read from it and checked here: every relay API path it names
is a route of the reference server with the method it gives; every refusal status its
table lists is one the server gives; every completion form it shows is accepted by the
reference server in the state it names and is what the kit's relay (and the Node
example) builds; every JSON.stringify test vector is measured as the kit measures
(``pytest_osfoundry/_jslength.py``) and as Node does; the figures it quotes are the
suite's constants.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry._jslength import js_stringify, js_stringify_length
from pytest_osfoundry._vocabulary import (
    NO_LONGER_SHARED,
    RELAY_ACTIONS,
    RELAY_COMMANDS,
    RELAY_SYNC,
)
from pytest_osfoundry.conformance.relay._driver import LONG_POLL_SECONDS
from pytest_osfoundry.conformance.relay._harness import (
    FLOOD_REQUESTS,
    FLOOD_WINDOW,
    READY_SECONDS,
)
from pytest_osfoundry.relay._bounded import bounded_completion
from pytest_osfoundry.relay.driven import START_ATTEMPTS
from tests.relay_node._node import NO_NODE, NODES
from tests.server.osf_server_kit import GS1, RELAY, Srv, session

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "relay-conformance.md").read_text(encoding="utf-8")


@pytest.fixture
def srv() -> Srv:
    """A reference server on a virtual clock whose project shares one session."""
    s = Srv()
    s.server.state.share(s.pid, [session(GS1)])
    return s


def _between(name: str) -> str:
    """The text between ``<!-- name: begin -->`` and ``<!-- name: end -->``."""
    match = re.search(rf"<!-- {name}: begin -->\n(.*?)<!-- {name}: end -->", DOC, re.S)
    assert match is not None, f"docs/relay-conformance.md has no {name} block"
    return match.group(1)


def _rows(block: str) -> list[list[str]]:
    """A markdown table's body rows, cells stripped (a cell may hold ``\\|`` escaped)."""
    rows = []
    for line in block.strip().splitlines()[2:]:
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([cell.strip() for cell in cells])
    return rows


def _code(cell: str) -> str | None:
    """The cell's text when the cell is exactly one code span, else ``None``."""
    match = re.fullmatch(r"`([^`]+)`", cell)
    return None if match is None else match.group(1)


# ---------------------------------------------------------------------- the paths
PATHS = re.findall(r"\b(GET|POST) (/external-assistants/graph-relays/[^\s`|]+)", DOC)


def _a_running_command(srv: Srv) -> str:
    command_id = str(srv.queue()["command_id"])
    assert srv.start(command_id).status == 200
    return command_id


def test_the_doc_names_the_four_relay_paths_and_no_other() -> None:
    named = {(method, path.replace("{command_id}", "<id>")) for method, path in PATHS}
    routes = {("POST", RELAY_SYNC)} | {
        (method, f"{RELAY_COMMANDS}<id>/{action}") for action, method in RELAY_ACTIONS.items()
    }
    assert named == routes


@pytest.mark.parametrize(("method", "path"), sorted(set(PATHS)))
def test_each_path_is_served_with_its_method(method: str, path: str, srv: Srv) -> None:
    command_id = _a_running_command(srv)
    tail = path.removeprefix(RELAY).replace("{command_id}", command_id)
    body: Any = None
    if tail == "/sync":
        body = {"project_id": srv.pid, "sessions": [session(GS1)]}
    elif tail.endswith("/start"):
        body = {"execution_id": "exec_1"}
    elif tail.endswith("/complete"):
        body = {"execution_id": "exec_1", "status": "completed", "result": None}
    reply = srv.relay(method, tail, body)
    assert reply.status == 200, (reply.status, reply.body)
    other = "GET" if method == "POST" else "POST"
    assert srv.relay(other, tail, body).status == 405


# ---------------------------------------------------------------------- the refusals
def _provoke(srv: Srv, status: int) -> int:
    """Provoke ``status`` from the reference server as the refusals table says it comes."""
    command_id = _a_running_command(srv)
    complete = f"/commands/{command_id}/complete"
    if status == 400:
        return srv.relay("POST", complete, {"status": "completed", "oops": 1}).status
    if status == 401:
        return srv.relay("POST", "/sync", {"project_id": srv.pid, "sessions": []}, None).status
    if status == 403:
        return srv.relay("GET", f"/commands/{command_id}/control", token=srv.agent).status
    if status == 404:
        return srv.relay("GET", "/commands/0b5f7a3e-9c1d-4e2f-8a6b-7c8d9e0f1a2b/control").status
    if status == 405:
        return srv.relay("GET", f"/commands/{command_id}/start").status
    if status == 409:
        assert srv.relay("POST", complete, {"status": "completed", "result": 1}).status == 200
        return srv.relay("POST", complete, {"status": "completed", "result": 2}).status
    if status == 413:
        return srv.relay("POST", complete, {"status": "completed", "result": "a" * 100_000}).status
    raise AssertionError(f"the refusals table lists {status}, which this test cannot provoke")


def test_the_refusals_table_lists_the_statuses_the_server_refuses_with() -> None:
    statuses = [int(row[0]) for row in _rows(_between("refusals"))]
    assert statuses == [400, 401, 403, 404, 405, 409, 413]
    for status in statuses:
        srv = Srv()
        srv.server.state.share(srv.pid, [session(GS1)])
        assert _provoke(srv, status) == status


# ---------------------------------------------------------------------- the completion forms
FORMS: dict[str, dict[str, Any]] = {
    name: json.loads(body)
    for name, body in re.findall(r"^```json form=([\w-]+)\n(.*?)^```", DOC, re.S | re.M)
}
FIGURES = ("total_tokens", "reported_cost")


def test_the_doc_shows_the_six_forms() -> None:
    assert sorted(FORMS) == sorted(
        [
            "completed",
            "failed",
            "cancelled-recheck",
            "cancelled-running",
            "cancelled-finished",
            "truncated",
        ]
    )


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_reference_server_accepts_each_form_in_its_state(name: str, srv: Srv) -> None:
    form = FORMS[name]
    command_id = str(srv.queue()["command_id"])
    if name != "cancelled-recheck":  # the re-check's command is never started
        assert srv.start(command_id, form["execution_id"]).json() == {"status": "running"}
    if name.startswith("cancelled-") and name != "cancelled-recheck":
        srv.cancel(command_id)  # the agent's cancel: the flag a control poll reads
        control = srv.relay("GET", f"/commands/{command_id}/control").json()
        assert control == {"status": "running", "cancel_requested": True}
    path = f"/commands/{command_id}/complete"
    for _ in range(2):  # the outbox's redelivery of the same body changes nothing
        reply = srv.relay("POST", path, form)
        assert (reply.status, reply.json()) == (200, {"status": form["status"]})
    view = srv.get(command_id)
    assert view["status"] == form["status"] and view["execution_id"] == form["execution_id"]
    for key in ("result", "result_truncated", "error", *FIGURES):
        assert view.get(key) == form.get(key), key


def _kit_builds(name: str, form: dict[str, Any]) -> dict[str, Any]:
    """What the kit's relay builds for the case the form shows (FakeRelay's arguments)."""
    eid = form["execution_id"]
    figures = {key: form[key] for key in FIGURES if key in form}
    if name == "completed":
        return bounded_completion(
            execution_id=eid, status="completed", result=form["result"], **figures
        )
    if name == "failed":
        return bounded_completion(execution_id=eid, status="failed", error=form["error"], **figures)
    if name == "cancelled-recheck":
        return bounded_completion(execution_id=eid, status="cancelled", error=NO_LONGER_SHARED)
    if name.startswith("cancelled-"):  # the run's figures; its result and error dropped
        return bounded_completion(execution_id=eid, status="cancelled", **figures)
    assert name == "truncated"
    over = "a" * 100_000  # the whole completion would be over the bound
    return bounded_completion(
        execution_id=eid, status="completed", result=over, total_tokens=7, reported_cost=0.5
    )


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_is_what_the_kits_relay_builds(name: str) -> None:
    form = FORMS[name]
    built = _kit_builds(name, form)
    assert list(built.items()) == list(form.items())  # the members, their order, values
    assert form.get("error") != NO_LONGER_SHARED or name == "cancelled-recheck"


@pytest.mark.skipif(not NODES, reason=NO_NODE)
def test_each_form_is_what_the_node_example_builds() -> None:
    """The Node example's ``completionOf`` fields, through its ``boundedCompletion``."""
    bounded = (ROOT / "examples" / "relay-node" / "bounded.mjs").as_uri()
    cases = {
        "completed": {"status": "completed", "result": FORMS["completed"]["result"]},
        "failed": {"status": "failed", "error": FORMS["failed"]["error"]},
        "cancelled-recheck": {"status": "cancelled", "error": NO_LONGER_SHARED},
        "cancelled-running": {"status": "cancelled"},
        "cancelled-finished": {"status": "cancelled"},
        "truncated": {"status": "completed", "result": "a" * 100_000},
    }
    for name, case in cases.items():
        form = FORMS[name]
        case["executionId"] = form["execution_id"]
        if name != "cancelled-recheck":  # the re-check's completion has no figures
            case["totalTokens"] = form.get("total_tokens", 7)
            case["reportedCost"] = form.get("reported_cost", 0.5)
    script = (
        f"import {{ boundedCompletion }} from {json.dumps(bounded)};\n"
        "let text = ''; process.stdin.setEncoding('utf8');\n"
        "process.stdin.on('data', (c) => { text += c; });\n"
        "process.stdin.on('end', () => { const cases = JSON.parse(text);\n"
        "  const out = Object.fromEntries(Object.entries(cases).map("
        "([k, c]) => [k, boundedCompletion(c)]));\n"
        "  process.stdout.write(JSON.stringify(out)); });\n"
    )
    out = subprocess.run(
        [NODES[0][1], "--input-type=module", "-e", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    built = json.loads(out)
    for name, form in FORMS.items():
        assert list(built[name].items()) == list(form.items()), name


# ---------------------------------------------------------------------- JSON.stringify
VECTORS = [
    (_code(row[0]), _code(row[1]), int(row[2].replace(",", "")))
    for row in _rows(_between("json-vectors"))
]


def test_the_vectors_are_read_from_the_doc() -> None:
    assert len(VECTORS) >= 30 and all(text is not None for text, _, _ in VECTORS)
    assert sum(output is not None for _, output, _ in VECTORS) >= 25


@pytest.mark.parametrize(("text", "output", "length"), VECTORS, ids=[v[0] or "" for v in VECTORS])
def test_each_vector_is_measured_as_the_kit_measures(
    text: str, output: str | None, length: int
) -> None:
    value = json.loads(text)
    assert js_stringify_length(value) == length
    if output is not None:
        assert js_stringify(value) == output


@pytest.mark.skipif(not NODES, reason=NO_NODE)
def test_each_vector_is_what_node_writes() -> None:
    """One Node process: ``JSON.stringify(JSON.parse(input))`` and its length, per row."""
    script = (
        "let text = ''; process.stdin.setEncoding('utf8');"
        "process.stdin.on('data', (c) => { text += c; });"
        "process.stdin.on('end', () => { process.stdout.write(JSON.stringify("
        "JSON.parse(text).map((t) => { const o = JSON.stringify(JSON.parse(t));"
        " return [o, o.length]; }))); });"
    )
    inputs = [text for text, _, _ in VECTORS]
    out = subprocess.run(
        [NODES[0][1], "-e", script],
        input=json.dumps(inputs),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    ).stdout
    for (text, output, length), (written, units) in zip(VECTORS, json.loads(out), strict=True):
        assert units == length, text
        if output is not None:
            assert written == output, text


@pytest.mark.skipif(not NODES, reason=NO_NODE)
def test_what_json_cannot_carry_is_written_as_the_doc_says() -> None:
    """NaN and the infinities (no JSON text holds them) become ``null``; ``-0`` is ``0``."""
    assert "NaN and ±Infinity as `null`" in " ".join(DOC.split())
    written = subprocess.run(
        [NODES[0][1], "-e", "process.stdout.write(JSON.stringify([NaN, Infinity, -Infinity, -0]))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    kit = js_stringify([float("nan"), float("inf"), float("-inf"), -0.0])
    assert written == kit == "[null,null,null,0]"


def test_the_python_figure_the_doc_quotes_for_its_last_vector() -> None:
    """The page says how long Python's ``json.dumps`` writes the completion vector."""
    completion = json.loads(str(VECTORS[-1][0]))
    quoted = re.search(r"Python's `json\.dumps` (\d+)", DOC)
    assert quoted is not None and int(quoted.group(1)) == len(json.dumps(completion))
    assert VECTORS[-1][2] == js_stringify_length(completion) < len(json.dumps(completion))


# ---------------------------------------------------------------------- figures and pointers
@pytest.mark.parametrize(
    "phrase",
    [
        f"holds up to {LONG_POLL_SECONDS:g} s",
        f"more than {FLOOD_REQUESTS} relay API requests within {FLOOD_WINDOW:g} s",
        f"the first sync within {READY_SECONDS:g} s",
    ],
)
def test_the_figures_the_doc_quotes_are_the_suites(phrase: str) -> None:
    assert phrase in " ".join(DOC.split())


def test_the_lost_start_tries_the_doc_gives_are_both_relays() -> None:
    """R14: "up to N times in a row" a pass, N the kit relay's and the Node example's."""
    node = (ROOT / "examples" / "relay-node" / "relay.mjs").read_text(encoding="utf-8")
    declared = re.search(r"export const START_ATTEMPTS = (\d+);", node)
    assert declared is not None and int(declared.group(1)) == START_ATTEMPTS
    assert f"up to {START_ATTEMPTS} times in a row" in " ".join(DOC.split())


def test_the_doc_names_the_node_example_as_the_relay_to_copy() -> None:
    copy = DOC[DOC.index("## Which relay to copy") :]
    assert copy.split("\n\n")[1].startswith("**Copy [`examples/relay-node/`]")
    assert "pattern for yours" not in DOC and "/work/shared" not in DOC
