"""``osfoundry-fake serve`` as a real subprocess: one JSON line, working URLs, clean exits."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and select")

KEYS = {
    "mcp_url",
    "relay_url",
    "project_id",
    "agent_token",
    "other_agent_token",
    "read_token",
    "desktop_token",
    "stranger_token",
    "stranger_desktop_token",
    "stranger_project_id",
}


def spawn(*args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def first_line(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> bytes:
    """The first stdout line, read while the process keeps running (so it was flushed)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "serve printed nothing (not flushed?)"
    line = proc.stdout.readline()
    assert proc.poll() is None, "serve exited after printing"
    return line


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> tuple[int, bytes, bytes]:
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=5)
    return proc.returncode, out, err


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[bytes], dict[str, Any]]]:
    proc = spawn()
    try:
        line = first_line(proc)
        yield proc, json.loads(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)


def rpc(url: str, method: str, params: Any = None, token: str | None = None) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return httpx.post(url, json=message, headers=headers, timeout=10)


def test_serve_prints_one_json_line_and_stops_on_sigterm() -> None:
    proc = spawn()
    line = first_line(proc)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    info = json.loads(line)
    assert set(info) == KEYS
    assert all(isinstance(v, str) and v for v in info.values())
    assert info["mcp_url"].startswith("http://127.0.0.1:") and info["mcp_url"].endswith("/mcp")
    assert info["mcp_url"] == info["relay_url"] + "/mcp"
    assert len({info[k] for k in KEYS if k.endswith("_token")}) == 6
    assert info["stranger_project_id"] != info["project_id"]
    code, out, err = stop(proc)
    assert code == 0
    assert out == b""  # exactly one line in all
    assert not any(info[k].encode() in err for k in KEYS if k.endswith("_token"))


def test_serve_urls_work(served: tuple[subprocess.Popen[bytes], dict[str, Any]]) -> None:
    _, info = served
    names = [t["name"] for t in rpc(info["mcp_url"], "tools/list").json()["result"]["tools"]]
    assert names == [
        "run_graph_session",
        "list_graph_sessions",
        "get_graph_run",
        "cancel_graph_run",
    ]
    reply = rpc(
        info["mcp_url"],
        "tools/call",
        {"name": "list_graph_sessions", "arguments": {"project_id": info["project_id"]}},
        info["agent_token"],
    )
    assert reply.json()["result"]["structuredContent"] == {
        "project_id": info["project_id"],
        "sessions": [],
    }
    sync = httpx.post(
        info["relay_url"] + "/external-assistants/graph-relays/sync",
        json={"project_id": info["project_id"], "sessions": []},
        headers={"authorization": f"Bearer {info['desktop_token']}"},
        timeout=10,
    )
    assert sync.json() == {"project_id": info["project_id"], "commands": []}
    reply = rpc(
        info["mcp_url"],
        "tools/call",
        {"name": "cancel_graph_run", "arguments": {"command_id": "x"}},
        info["read_token"],
    )
    assert reply.status_code == 403


def test_serve_fixed_tokens_and_ids() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fixed = {
        "--project-id": "proj_fixed",
        "--agent-token": "agent-tok-1",
        "--other-agent-token": "agent-tok-2",
        "--read-token": "read-tok-1",
        "--desktop-token": "desk-tok-1",
    }
    args = [x for pair in fixed.items() for x in pair]
    proc = spawn(*args, "--port", str(port), "--mcp-path", "/v1/mcp")
    try:
        info = json.loads(first_line(proc))
        assert {k: v for k, v in info.items() if not k.startswith("stranger_")} == {
            "mcp_url": f"http://127.0.0.1:{port}/v1/mcp",
            "relay_url": f"http://127.0.0.1:{port}",
            "project_id": "proj_fixed",
            "agent_token": "agent-tok-1",
            "other_agent_token": "agent-tok-2",
            "read_token": "read-tok-1",
            "desktop_token": "desk-tok-1",
        }
        reply = rpc(
            info["mcp_url"],
            "tools/call",
            {"name": "get_graph_run", "arguments": {"command_id": "x"}},
            "agent-tok-1",
        )
        assert (
            reply.json()["result"]["content"][0]["text"] == "Graph run not found or access removed"
        )
    finally:
        code, _, _ = stop(proc, signal.SIGINT)
    assert code == 0


def test_serve_port_in_use_is_exit_2() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = spawn("--port", str(port))
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2
    assert out == b""
    assert f"cannot listen on 127.0.0.1:{port}".encode() in err
    assert b"Traceback" not in err


def test_serve_non_numeric_port_is_exit_2() -> None:
    proc = spawn("--port", "http")
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 2
    assert b"--port" in err and b"http" in err and b"Traceback" not in err


def test_serve_bad_token_is_exit_2() -> None:
    proc = spawn("--agent-token", "has space")
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == b""
    assert b"Traceback" not in err
    assert b"token" in err and b"has space" not in err  # tokens are never printed


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_serve_out_of_range_port_is_exit_2(port: str) -> None:
    proc = spawn("--port", port)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == b""
    assert b"Traceback" not in err
    assert b"port" in err


def test_serve_bad_mcp_path_is_one_line_exit_2() -> None:
    proc = spawn("--mcp-path", "foo")
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == b""
    assert b"--mcp-path" in err and b"expected a path starting with '/'" in err
    assert b"Traceback" not in err and b"ValueError" not in err


def test_the_suite_against_serve_skips_nothing(
    served: tuple[subprocess.Popen[bytes], dict[str, Any]],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_osfoundry.conformance.suite._registry import all_checks

    _, info = served
    for name in list(os.environ):
        if name.startswith("OSF_"):
            monkeypatch.delenv(name)
    options = [f"--osf-{key.replace('_', '-')}={value}" for key, value in info.items()]
    options = [o for o in options if not o.startswith(("--osf-mcp-url", "--osf-relay-url"))]
    report = pytester.path / "report.json"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--osf-target={info['mcp_url']}",
        "--osf-strict",
        f"--osf-report={report}",
        *options,
    )
    data = json.loads(report.read_text(encoding="utf-8"))
    assert result.ret == pytest.ExitCode.OK, data["summary"]
    assert data["summary"]["skipped"] == 0 and data["summary"]["not_run"] == 0
    expected = {c.check_id for c in all_checks() if c.opt_in is None}
    assert {c["id"] for c in data["checks"] if c["outcome"] == "passed"} == expected


def test_serve_relay_runs_a_queued_run(pytester: pytest.Pytester) -> None:
    proc = spawn("--relay", "--interval", "0.5", "--graph-duration", "0.2", "--sessions", "2")
    try:
        info = json.loads(first_line(proc))
        assert len(info["sessions"]) == 2
        gsid = info["sessions"][1]["graph_session_id"]
        ticket = rpc(
            info["mcp_url"],
            "tools/call",
            {
                "name": "run_graph_session",
                "arguments": {"graph_session_id": gsid, "idempotency_key": "relay-test-1"},
            },
            info["agent_token"],
        ).json()["result"]["structuredContent"]
        deadline = time.monotonic() + 20
        status = ticket["status"]
        while status != "completed" and time.monotonic() < deadline:
            time.sleep(0.2)
            view = rpc(
                info["mcp_url"],
                "tools/call",
                {"name": "get_graph_run", "arguments": {"command_id": ticket["command_id"]}},
                info["agent_token"],
            ).json()["result"]["structuredContent"]
            status = view["status"]
        assert status == "completed"
    finally:
        code, _, err = stop(proc)
    assert code == 0
    assert info["desktop_token"].encode() not in err and info["agent_token"].encode() not in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--relay", "--interval", "0"], b"--interval"),
        (["--relay", "--sessions", "101"], b"--sessions"),
        (["--relay", "--graph-duration", "x"], b"--graph-duration"),
    ],
)
def test_serve_relay_bad_values_are_exit_2(args: list[str], needle: bytes) -> None:
    proc = spawn(*args)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == b""
    assert needle in err and b"Traceback" not in err


def test_serve_logs_a_request_that_breaks_mcps_schema(
    served: tuple[subprocess.Popen[bytes], dict[str, Any]],
) -> None:
    proc, info = served
    params = {"protocolVersion": "2025-11-25", "capabilities": "all", "clientInfo": {"name": "t"}}
    error = rpc(info["mcp_url"], "initialize", params).json()["error"]
    assert error["code"] == -32602 and "at /params/" in error["message"]
    _, _, err = stop(proc)
    text = err.decode()
    assert "osfoundry-fake serve: refused a request breaking MCP's schema: Invalid params:" in text
    assert "initialize at /params/" in text


def test_serve_echoes_no_token_on_stderr(
    served: tuple[subprocess.Popen[bytes], dict[str, Any]],
) -> None:
    """Issue 39.4's exact case: another agent's token inside a refused ``_meta`` field is
    quoted by the schema-refusal warning; neither stderr nor the answer shows it."""
    proc, info = served
    secret = info["other_agent_token"]
    params = {
        "name": "get_graph_run",
        "arguments": {"command_id": "x"},
        "_meta": {"progressToken": {"t": secret}},
    }
    reply = rpc(info["mcp_url"], "tools/call", params, info["agent_token"])
    assert reply.json()["error"]["code"] == -32602 and secret not in reply.text
    _, _, err = stop(proc)
    text = err.decode()
    assert "refused a request breaking MCP's schema" in text and "{'t': '***'}" in text
    assert not any(info[k] in text for k in KEYS if k.endswith("_token"))


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--keep-runs", "0"),
        ("--keep-chars", "99999"),
        ("--keep-keys", "3600"),
        ("--relay-history", "0"),
    ],
)
def test_serve_refuses_a_bound_below_its_least(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_osfoundry._cli import build_parser

    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", option, value])
    assert exit_info.value.code == 2
    assert f"argument {option}: expected " in capsys.readouterr().err


def test_serve_keeps_what_its_options_say() -> None:
    """``--keep-runs 1``: the first completed run is forgotten once a second completes,
    and answers as an unknown id; its key still replays the ticket (R5)."""
    proc = spawn("--keep-runs", "1", "--keep-chars", "100000", "--keep-keys", "90000")
    try:
        info = json.loads(first_line(proc))
        relay = info["relay_url"] + "/external-assistants/graph-relays"
        desktop = {"authorization": f"Bearer {info['desktop_token']}"}
        gsid = "gs_" + "c" * 32
        shared = {"graph_session_id": gsid, "slug": "kept"}
        httpx.post(
            relay + "/sync",
            json={"project_id": info["project_id"], "sessions": [shared]},
            headers=desktop,
            timeout=10,
        )
        done = []
        for key in ("keep-key-0001", "keep-key-0002"):
            args = {"graph_session_id": gsid, "idempotency_key": key}
            params = {"name": "run_graph_session", "arguments": args}
            ticket = rpc(info["mcp_url"], "tools/call", params, info["agent_token"])
            command_id = ticket.json()["result"]["structuredContent"]["command_id"]
            body = {"execution_id": f"exec-{key}", "status": "failed", "error": "x"}
            reply = httpx.post(
                f"{relay}/commands/{command_id}/complete", json=body, headers=desktop, timeout=10
            )
            assert reply.status_code == 200, reply.text
            done.append(command_id)
        params = {"name": "get_graph_run", "arguments": {"command_id": done[0]}}
        gone = rpc(info["mcp_url"], "tools/call", params, info["agent_token"]).json()["result"]
        assert (
            gone["isError"]
            and gone["content"][0]["text"] == "Graph run not found or access removed"
        )
        args = {"graph_session_id": gsid, "idempotency_key": "keep-key-0001"}
        params = {"name": "run_graph_session", "arguments": args}
        replay = rpc(info["mcp_url"], "tools/call", params, info["agent_token"]).json()
        assert replay["result"]["structuredContent"]["command_id"] == done[0]
        assert replay["result"]["structuredContent"]["status"] == "failed"
    finally:
        stop(proc)


def test_serve_relay_history_reaches_the_desktop() -> None:
    from pytest_osfoundry._cli import _Desktop, build_parser

    args = build_parser().parse_args(["serve", "--relay", "--relay-history", "7"])
    desktop = _Desktop("http://127.0.0.1:9", "t0ken-unused", "proj_x", args)
    try:
        assert desktop.relay.passes.limit == desktop.relay.events.limit == 7
    finally:
        desktop.transport.close()
