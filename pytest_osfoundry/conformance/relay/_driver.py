"""The driver API the relay suite serves to a relay's adapter (docs/relay-conformance.md).

One :class:`DriverApi` (a :class:`~pytest_osfoundry.http.Handler`) serves every
check at once: each check gets a :class:`Scenario` under its own base path
``/s/<key>``, which is the ``OSF_RELAY_DRIVER`` its relay is started with. Paths
under that base::

    GET  /sharing[?after=n]           the sharing settings (long-poll with after)
    POST /runs                        the engine asks how a run goes
    POST /runs/{command_id}/cancel    the engine cancels a run

A bad request is answered 400 with ``{"error": ...}`` naming the wrong field; an
unknown scenario or path 404. The scenario records every run and cancel with its time.
"""

from __future__ import annotations

import copy
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from pytest_osfoundry.http import Request, Response, json_response

__all__ = ["CancelRecord", "DriverApi", "RunPlan", "RunRecord", "Scenario"]

LONG_POLL_SECONDS = 10.0
"""How long ``?after=n`` waits for a new revision before answering the same one."""


@dataclass(frozen=True)
class RunPlan:
    """How the driver tells the engine a run goes (the answer to ``POST /runs``)."""

    duration: float = 0.2
    status: str = "completed"
    result: Any = field(default_factory=lambda: {"ok": True})
    error: str | None = None
    total_tokens: int = 7
    reported_cost: float = 0.01

    def answer(self) -> dict[str, Any]:
        """The JSON body of the answer."""
        return {
            "duration": self.duration,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "total_tokens": self.total_tokens,
            "reported_cost": self.reported_cost,
        }


@dataclass(frozen=True)
class RunRecord:
    """One ``POST /runs`` the engine made: when, and what it asked."""

    at: float
    command_id: str
    channel: str
    graph_session_id: str
    arguments: Any


@dataclass(frozen=True)
class CancelRecord:
    """One ``POST /runs/{command_id}/cancel`` the engine made."""

    at: float
    command_id: str


Planner = Callable[[RunRecord], RunPlan]


class Scenario:
    """One check's driver: its sharing settings, its run plans, its records."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._cond = threading.Condition()
        self.revision = 1
        self.projects: list[dict[str, Any]] = []
        self.runs: list[RunRecord] = []
        self.cancels: list[CancelRecord] = []
        self.sharing_reads: list[float] = []
        self.planner: Planner = lambda record: RunPlan()
        self.stop_after = 0.1
        self.fail_next = 0
        """How many of the next driver requests are answered 503 (a failing driver)."""

    # ---------------------------------------------------------------- the check's side
    def set_projects(self, projects: list[dict[str, Any]]) -> None:
        """Replace the sharing settings (a new revision; watchers wake)."""
        with self._cond:
            self.projects = copy.deepcopy(projects)
            self.revision += 1
            self._cond.notify_all()

    def change(self, edit: Callable[[list[dict[str, Any]]], None]) -> None:
        """Edit the sharing settings in place under the lock (a new revision)."""
        with self._cond:
            edit(self.projects)
            self.revision += 1
            self._cond.notify_all()

    def snapshot(self) -> dict[str, Any]:
        """The sharing answer as ``GET /sharing`` gives it now."""
        with self._cond:
            return {"revision": self.revision, "projects": copy.deepcopy(self.projects)}

    # ---------------------------------------------------------------- the adapter's side
    def handle(self, request: Request, rest: str) -> Response:
        """Serve one driver request for this scenario (``rest`` is the path below its base)."""
        with self._cond:
            if self.fail_next > 0:
                self.fail_next -= 1
                return _error(503, "the driver is failing on purpose (a fault check)")
        if rest == "/sharing":
            if request.method != "GET":
                return _error(405, "use GET for /sharing")
            return self._sharing(request.query)
        if rest == "/runs":
            if request.method != "POST":
                return _error(405, "use POST for /runs")
            return self._run(request.body)
        if rest.startswith("/runs/") and rest.endswith("/cancel"):
            if request.method != "POST":
                return _error(405, "use POST for /runs/{command_id}/cancel")
            command_id = unquote(rest[len("/runs/") : -len("/cancel")])
            if not command_id:
                return _error(400, "command_id in the path is empty")
            with self._cond:
                self.cancels.append(CancelRecord(time.time(), command_id))
                return json_response(200, {"stop_after": self.stop_after})
        return _error(404, f"no driver endpoint at {rest or '/'}")

    def _sharing(self, query: str) -> Response:
        params = parse_qs(query, keep_blank_values=True)
        after_values = params.get("after")
        with self._cond:
            self.sharing_reads.append(time.time())
            if after_values is not None:
                try:
                    after = int(after_values[0])
                except ValueError:
                    return _error(
                        400, f"after must be an integer revision, got {after_values[0]!r}"
                    )
                self._cond.wait_for(lambda: self.revision > after, timeout=LONG_POLL_SECONDS)
            return json_response(
                200, {"revision": self.revision, "projects": copy.deepcopy(self.projects)}
            )

    def _run(self, body: bytes) -> Response:
        try:
            data = json.loads(body)
        except ValueError as err:
            return _error(400, f"the body must be JSON: {err}")
        if not isinstance(data, dict):
            return _error(400, "the body must be a JSON object")
        for name in ("command_id", "channel", "graph_session_id"):
            if not isinstance(data.get(name), str) or not data[name]:
                return _error(400, f"{name} must be a non-empty string, got {data.get(name)!r}")
        if "arguments" not in data:
            return _error(400, "arguments is missing (send {} for none)")
        record = RunRecord(
            time.time(),
            data["command_id"],
            data["channel"],
            data["graph_session_id"],
            data["arguments"],
        )
        with self._cond:
            self.runs.append(record)
            planner = self.planner
        return json_response(200, planner(record).answer())


class DriverApi:
    """The driver API's HTTP handler: routes ``/s/<key>/...`` to that key's :class:`Scenario`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scenarios: dict[str, Scenario] = {}

    def new_scenario(self) -> Scenario:
        """A fresh scenario under a new random key."""
        scenario = Scenario(secrets.token_hex(8))
        with self._lock:
            self._scenarios[scenario.key] = scenario
        return scenario

    def forget(self, scenario: Scenario) -> None:
        """Drop a finished check's scenario (its base path answers 404 from now on)."""
        with self._lock:
            self._scenarios.pop(scenario.key, None)

    def __call__(self, request: Request, /) -> Response:
        """Answer one driver request; never raises."""
        parts = request.path.split("/", 3)
        if len(parts) < 3 or parts[1] != "s":
            return _error(404, f"no driver endpoint at {request.path}")
        with self._lock:
            scenario = self._scenarios.get(parts[2])
        if scenario is None:
            return _error(404, "no such scenario (the check has ended)")
        rest = "/" + parts[3] if len(parts) > 3 else ""
        try:
            return scenario.handle(request, rest)
        except Exception as err:  # a bug in a check's planner: answer, never crash the door
            return _error(500, f"the driver failed: {type(err).__name__}: {err}")


def _error(status: int, message: str) -> Response:
    return json_response(status, {"error": message})
