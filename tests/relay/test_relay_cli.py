"""``osfoundry-fake relay`` as a real subprocess against ``osfoundry-fake serve``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import HttpTransport, McpClient
from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import ReferenceServer


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _exit(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for a process that must end by itself."""
    _, err = proc.communicate(timeout=20)
    return proc.returncode, err


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    proc = _spawn("serve")
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    yield proc, info
    _stop(proc)


def _relay(info: dict[str, Any], *extra: str) -> subprocess.Popen[str]:
    return _spawn(
        "relay",
        "--relay-url",
        info["relay_url"],
        "--desktop-token",
        info["desktop_token"],
        "--project-id",
        info["project_id"],
        "--interval",
        "0.2",
        "--control-poll",
        "0.1",
        *extra,
    )


def _wait_for(predicate: Any, seconds: float = 15.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_relay_runs_a_queued_command_and_stops_cleanly(
    served: tuple[subprocess.Popen[str], dict[str, Any]],
) -> None:
    _, info = served
    relay = _relay(info, "--sessions", "2", "--graph-duration", "0.2")
    assert relay.stdout is not None
    line = json.loads(relay.stdout.readline())
    assert line["project_id"] == info["project_id"]
    assert len(line["sessions"]) == 2
    assert {"graph_session_id", "slug", "name"} <= set(line["sessions"][0])

    with HttpTransport() as transport:
        agent = McpClient(transport, info["mcp_url"], info["agent_token"])
        gsid = line["sessions"][0]["graph_session_id"]
        ticket = agent.run_graph_session(gsid, "cli-relay-key-1")
        run = _wait_for(
            lambda: (v := agent.get_graph_run(ticket["command_id"]))["status"] == "completed" and v
        )
    assert run["started_at"] and run["finished_at"]

    code, err = _stop(relay)
    assert code == 0
    assert "delivered" in err and ticket["command_id"] in err
    assert info["desktop_token"] not in err and info["agent_token"] not in err
    assert "Traceback" not in err


def test_relay_keeps_an_undelivered_completion_in_its_outbox_file(
    served: tuple[subprocess.Popen[str], dict[str, Any]], tmp_path: Path
) -> None:
    server, info = served
    outbox = tmp_path / "outbox.json"
    relay = _relay(info, "--graph-duration", "1.0", "--outbox", str(outbox))
    assert relay.stdout is not None
    line = json.loads(relay.stdout.readline())
    with HttpTransport() as transport:
        agent = McpClient(transport, info["mcp_url"], info["agent_token"])
        ticket = agent.run_graph_session(line["sessions"][0]["graph_session_id"], "cli-key-2")
        _wait_for(lambda: agent.get_graph_run(ticket["command_id"])["status"] == "running")
    _stop(server)  # the completion POST can no longer arrive

    def entry() -> Any:
        if not outbox.exists():
            return None
        entries = json.loads(outbox.read_text())["entries"]
        return entries[0] if entries else None

    command_id, body = _wait_for(entry)
    code, err = _stop(relay)
    assert code == 0
    assert command_id == ticket["command_id"] and body["status"] == "completed"
    assert json.loads(outbox.read_text())["entries"] == [[command_id, body]]
    assert "1 completion(s) wait in the outbox" in err


def test_relay_with_a_wrong_token_exits_2_with_a_clear_error(
    served: tuple[subprocess.Popen[str], dict[str, Any]],
) -> None:
    _, info = served
    relay = _relay({**info, "desktop_token": "not-a-real-token"})
    code, err = _exit(relay)
    assert code == 2
    assert "refused" in err and "401" in err
    assert "not-a-real-token" not in err and "Traceback" not in err


def test_relay_with_no_server_exits_2() -> None:
    relay = _relay(
        {"relay_url": "http://127.0.0.1:9", "desktop_token": "t0ken-x", "project_id": "p"}
    )
    code, err = _exit(relay)
    assert code == 2 and "cannot sync" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "value"), [("--interval", "0"), ("--sessions", "101"), ("--control-poll", "x")]
)
def test_relay_bad_arguments_exit_2(flag: str, value: str) -> None:
    relay = _spawn(
        "relay",
        "--relay-url",
        "http://127.0.0.1:9",
        "--desktop-token",
        "t",
        "--project-id",
        "p",
        flag,
        value,
    )
    code, err = _exit(relay)
    assert code == 2 and flag in err


class _SyncCounter(HandlerWrapper[ReferenceServer]):
    """The reference server, counting the relay syncs it answers."""

    def __init__(self) -> None:
        super().__init__(ReferenceServer())
        self.server = self.inner
        self.mcp_path = self.server.mcp_path
        self.syncs = 0

    def __call__(self, request: Request, /) -> Response:
        if request.path.endswith("/graph-relays/sync"):
            self.syncs += 1
        return self.server(request)


def test_relay_syncs_once_at_start() -> None:
    from pytest_osfoundry.server import LoopbackServer

    counter = _SyncCounter()
    made = counter.server.provision()
    with LoopbackServer(counter) as loop:
        proc = _spawn(
            "relay",
            "--relay-url",
            loop.origin,
            "--desktop-token",
            made.desktop_token,
            "--project-id",
            made.project_id,
            "--interval",
            "60",
        )
        try:
            assert proc.stdout is not None
            announced = json.loads(proc.stdout.readline())  # printed after the first sync
            assert announced["project_id"] == made.project_id
            time.sleep(1.0)  # a second sync at start would have come by now
            assert counter.syncs == 1
        finally:
            code, err = _stop(proc)
    assert code == 0 and "Traceback" not in err
