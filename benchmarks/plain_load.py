"""Locustfile for ``bench_load.py``: plain users replaying pre-built requests, and a meter.

``PlainAgent`` and ``PlainDesktop`` are the floor the kit's users are measured against:
each builds one request once (a ``tools/call get_graph_run`` of a run it queued; a
relay ``sync`` of three sessions), then sends those same bytes again and again, at
the kit's users' pace (Locust's ``wait_time``), through the same
:class:`~pytest_osfoundry.load.StatsTransport` over the same wire transport as the
kit's users, so Locust's statistics see them alike. What the kit's
users cost above them is its clients, agent, relay, engine and clocks.

The meter (loaded beside the kit's locustfile too) writes, to the file named by
``OSF_BENCH_METER``, this process's CPU seconds and requests between the end of
spawning and the start of stopping, and the CPU seconds the server process
(``OSF_BENCH_SERVER_PID``) spent meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any

from locust import User, constant, events, task
from locust.env import Environment

from pytest_osfoundry.client import McpClient, RelayClient
from pytest_osfoundry.engine._sessions import make_sessions
from pytest_osfoundry.http import Response
from pytest_osfoundry.load import StatsTransport, read_target
from pytest_osfoundry.load._transport import wire

_marks: dict[str, float] = {}


def _server_cpu() -> float:
    pid = os.environ.get("OSF_BENCH_SERVER_PID")
    if not pid:
        return 0.0
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@events.spawning_complete.add_listener
def _spawned(user_count: int, **_: Any) -> None:
    from locust.runners import Runner

    del user_count
    runner: Runner | None = _ENV[0].runner if _ENV else None
    _marks.update(cpu=time.process_time(), wall=time.monotonic(), server=_server_cpu(),
                  requests=float(runner.stats.total.num_requests if runner else 0))


_ENV: list[Environment] = []


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    _ENV.append(environment)


@events.test_stopping.add_listener
def _stopping(environment: Environment, **_: Any) -> None:
    path = os.environ.get("OSF_BENCH_METER")
    if not path or "cpu" not in _marks or environment.runner is None:
        return
    out = {
        "cpu": time.process_time() - _marks["cpu"],
        "wall": time.monotonic() - _marks["wall"],
        "server_cpu": _server_cpu() - _marks["server"],
        "requests": environment.runner.stats.total.num_requests - _marks["requests"],
    }
    with open(path, "w") as file:
        json.dump(out, file)


class _Capture:
    """A transport that keeps the last request it sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last: tuple[str, str, Mapping[str, str], bytes] | None = None

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        self.last = (method, url, dict(headers), body)
        response: Response = self.inner.request(method, url, headers, body)
        return response


def _target() -> Any:
    return read_target(os.environ["OSF_BENCH_TARGET"])


#: Seconds between one plain user's requests: the pace of the kit's users in the cost
#: run (its agents poll every 5 system seconds at a time scale of 0.002), so both
#: kinds of user wait on the same timers between requests.
_PACE = float(os.environ.get("OSF_BENCH_PACE", "0.01"))
_SPLIT = [int(x) for x in os.environ.get("OSF_BENCH_PLAIN_SPLIT", "2,1").split(",")]


class PlainAgent(User):
    """Sends one pre-built ``get_graph_run`` again and again."""

    fixed_count = _SPLIT[0]
    wait_time = constant(_PACE)

    def on_start(self) -> None:
        target = _target()
        account = target.accounts[0]
        capture = _Capture(wire())
        client = McpClient(capture, target.mcp_url, account.agent_tokens[0])
        sessions = client.list_graph_sessions(account.project_id)["sessions"]
        gsid = sessions[0]["graph_session_id"] if sessions else "gs_" + "0" * 32
        try:
            command = client.run_graph_session(gsid, os.urandom(8).hex())["command_id"]
        except Exception:  # no session shared yet: read an unknown run, as cheap
            command = "00000000-0000-4000-8000-000000000000"
        with contextlib.suppress(Exception):
            client.get_graph_run(command)
        assert capture.last is not None
        self.request = capture.last
        self.transport = StatsTransport(capture.inner, self.environment.events.request.fire)

    @task
    def send(self) -> None:
        method, url, headers, body = self.request
        self.transport.request(method, url, headers, body)


class PlainDesktop(User):
    """Sends one pre-built relay ``sync`` again and again."""

    fixed_count = _SPLIT[1]
    wait_time = constant(_PACE)

    def on_start(self) -> None:
        target = _target()
        account = target.accounts[-1]
        capture = _Capture(wire())
        client = RelayClient(capture, target.relay_url, account.desktop_token)
        client.sync(account.project_id, [s.to_dict() for s in make_sessions(3, seed=0)])
        assert capture.last is not None
        self.request = capture.last
        self.transport = StatsTransport(capture.inner, self.environment.events.request.fire)

    @task
    def send(self) -> None:
        method, url, headers, body = self.request
        self.transport.request(method, url, headers, body)
