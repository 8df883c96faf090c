"""The suite against real servers on the official MCP SDKs (``examples/sdk_*_server.*``).

The Python SDK server (``examples/sdk_python_server.py``, ``mcp`` under uvicorn)
passes the whole suite strict; each SDK default it departs from, switched back on
(``--sdk-default NAME``), fails exactly the checks listed for it in
:data:`PYTHON_DEFAULTS` and no other. Each case starts the server on a free loopback
port in its own process and runs the suite at it over HTTP.
"""

from __future__ import annotations

import json
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _serving(*args: str) -> Iterator[dict[str, Any]]:
    """Start the example server; what it printed (URL, project ids, tokens)."""
    pytest.importorskip("mcp.server.lowlevel.server", reason="the mcp package is not installed")
    pytest.importorskip("uvicorn", reason="uvicorn is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(PYTHON_SERVER), "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else b""
        assert line, (
            f"the example server printed nothing: {proc.stderr.read() if proc.stderr else b''!r}"
        )
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


def test_every_departure_of_the_python_example_is_tested() -> None:
    source = PYTHON_SERVER.read_text(encoding="utf-8")
    listed = source.split("SDK_DEFAULTS = (", 1)[1].split(")", 1)[0]
    names = {part.strip().strip('"') for part in listed.split(",") if part.strip()}
    assert names == set(PYTHON_DEFAULTS)
