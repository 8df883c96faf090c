"""The reference server behind a recording handler: what the relay suite judges.

:class:`InstrumentedServer` wraps a :class:`~pytest_osfoundry.server.ReferenceServer`.
Every relay API request is recorded (:class:`RelayRequest`: its time, action,
command id, parsed body, the status answered) in the :class:`Lane` of the desktop
token it carried, so checks running at once each see only their own relay. A lane
also holds :class:`Fault` rules: refuse with a status, drop the connection (before
or after the server applied the request), hold the answer, call a hook before
answering, inject commands into a sync answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from pytest_osfoundry._wirejson import dumps
from pytest_osfoundry.conformance.expected import RELAY_PREFIX
from pytest_osfoundry.http import DropConnection, HandlerWrapper, Request, Response
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._internal import BadJson, parse_body

__all__ = ["Fault", "InstrumentedServer", "Lane", "RelayRequest"]

#: D10 / R9-R11: the relay API's paths, from the suite's own copy (they are asserted:
#: a request the relay sends elsewhere is recorded as no known action).
RELAY_SYNC = RELAY_PREFIX + "/sync"
RELAY_COMMANDS = RELAY_PREFIX + "/commands/"


def bearer_token(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ('' if absent or malformed):
    which check's lane a request belongs to (the server itself judges the token)."""
    scheme, _, token = (header or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@dataclass(frozen=True)
class RelayRequest:
    """One relay API request as the server saw it.

    ``action`` is ``sync``, ``start``, ``control``, ``complete`` or ``other``;
    ``body`` the parsed JSON (``None`` when absent or not JSON); ``status`` what was
    answered (0: the connection was dropped); ``answer`` the parsed answer body.
    """

    at: float
    method: str
    action: str
    command_id: str | None
    body: Any
    raw: bytes
    status: int
    answer: Any = None


@dataclass
class Fault:
    """One rule a lane applies to matching requests, ``times`` times (None: always).

    ``kind``: ``status`` (answer ``status`` without serving), ``drop`` (close unanswered,
    unserved), ``drop-after`` (serve, then close unanswered), ``hold`` (serve, answer
    ``seconds`` later), ``hook`` (serve, call ``hook(answer)``, then answer),
    ``inject`` (serve a sync, put ``commands`` first in its answer), ``hook-drop`` (call
    ``hook(request body)`` unserved, then close unanswered: a relay killed mid-request).
    """

    action: str
    kind: str
    times: int | None = 1
    status: int = 503
    seconds: float = 0.0
    command_id: str | None = None
    hook: Callable[[Any], None] | None = None
    commands: list[dict[str, Any]] = field(default_factory=list)
    only_with_commands: bool = False
    used: int = 0

    def matches(self, action: str, command_id: str | None) -> bool:
        """Whether this rule applies to a request (and has uses left)."""
        if self.times is not None and self.used >= self.times:
            return False
        return self.action == action and (self.command_id is None or self.command_id == command_id)


class Lane:
    """One check's view of the server: the requests its token sent, its fault rules."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._lock = threading.Lock()
        self.requests: list[RelayRequest] = []
        self.faults: list[Fault] = []
        self.arrived = threading.Condition(self._lock)

    def add_fault(self, fault: Fault) -> Fault:
        """Apply ``fault`` from now on."""
        with self._lock:
            self.faults.append(fault)
        return fault

    def take_fault(self, action: str, command_id: str | None) -> Fault | None:
        """The first matching rule, its use counted."""
        with self._lock:
            for fault in self.faults:
                if fault.matches(action, command_id):
                    fault.used += 1
                    return fault
        return None

    def refund(self, fault: Fault) -> None:
        """Give ``fault`` its use back (it met a request it does not apply to)."""
        with self._lock:
            fault.used -= 1

    def record(self, entry: RelayRequest) -> None:
        """Keep ``entry``; wake whoever waits for requests."""
        with self._lock:
            self.requests.append(entry)
            self.arrived.notify_all()

    def snapshot(self) -> list[RelayRequest]:
        """The requests so far, oldest first."""
        with self._lock:
            return list(self.requests)

    def wait_for(self, predicate: Callable[[list[RelayRequest]], bool], timeout: float) -> bool:
        """Wait until ``predicate(requests)`` holds; False after ``timeout`` seconds."""
        with self._lock:
            return self.arrived.wait_for(lambda: predicate(list(self.requests)), timeout)


def _route(path: str) -> tuple[str, str | None]:
    if path == RELAY_SYNC:
        return "sync", None
    if path.startswith(RELAY_COMMANDS):
        command_id, _, action = path[len(RELAY_COMMANDS) :].partition("/")
        if action in ("start", "control", "complete"):
            return action, unquote(command_id)
    return "other", None


def _json(raw: bytes) -> Any:
    """The JSON a body carries as the server reads it (strict, depth-bounded), or
    ``None``: what the server refuses as not JSON is recorded as no body."""
    try:
        return parse_body(raw) if raw else None
    except BadJson:
        return None


class InstrumentedServer(HandlerWrapper[ReferenceServer]):
    """The reference server, recording relay requests per desktop token (see module)."""

    def __init__(self, inner: ReferenceServer) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self._lanes: dict[str, Lane] = {}
        self.strangers: list[RelayRequest] = []
        """Relay requests whose token belongs to no lane (a relay sending a wrong token)."""

    def lane(self, token: str) -> Lane:
        """A new lane for ``token``."""
        lane = Lane(token)
        with self._lock:
            self._lanes[token] = lane
        return lane

    def wake_all(self) -> None:
        """Wake whoever waits on any lane (their waits look again at once)."""
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            with lane.arrived:
                lane.arrived.notify_all()

    def forget(self, lane: Lane) -> None:
        """Stop recording for ``lane``'s token."""
        with self._lock:
            self._lanes.pop(lane.token, None)

    def __call__(self, request: Request, /) -> Response:
        """Serve as the reference server does, recording relay requests and applying faults."""
        if not self.inner.relay.owns(request.path):
            return self.inner(request)
        arrived = time.time()
        action, command_id = _route(request.path)
        token = bearer_token(request.headers.get("authorization"))
        with self._lock:
            lane = self._lanes.get(token)
        body = _json(request.body)
        if lane is None:
            unrecorded = self.inner(request)
            with self._lock:
                self.strangers.append(
                    RelayRequest(
                        arrived, request.method, action, command_id, body, b"", unrecorded.status
                    )
                )
            return unrecorded
        fault = lane.take_fault(action, command_id)
        status = 0
        response: Response | None = None
        try:
            if fault is not None and fault.kind == "drop":
                raise DropConnection()
            if fault is not None and fault.kind == "hook-drop":
                if fault.hook is not None:
                    fault.hook(body)
                raise DropConnection()
            if fault is not None and fault.kind == "status":
                response = Response(
                    fault.status,
                    {"content-type": "application/json"},
                    dumps({"error": "refused on purpose by the relay suite (a fault check)"}),
                )
            else:
                response = self.inner(request)
                response = self._after(lane, fault, action, response)
            status = response.status
            return response
        finally:
            lane.record(
                RelayRequest(
                    arrived,
                    request.method,
                    action,
                    command_id,
                    body,
                    request.body,
                    status,
                    _json(response.body) if response is not None and status else None,
                )
            )

    @staticmethod
    def _after(lane: Lane, fault: Fault | None, action: str, response: Response) -> Response:
        if fault is None:
            return response
        if fault.kind == "drop-after":
            raise DropConnection()
        if fault.kind == "hold":
            time.sleep(fault.seconds)
        elif fault.kind == "hook" and fault.hook is not None:
            answer = _json(response.body)
            if fault.only_with_commands and not (
                isinstance(answer, dict) and answer.get("commands")
            ):
                lane.refund(fault)  # not the answer it waits for: the rule stays armed
            else:
                fault.hook(answer)
        elif fault.kind == "inject" and action == "sync" and response.status == 200:
            answer = _json(response.body)
            if isinstance(answer, dict) and isinstance(answer.get("commands"), list):
                answer["commands"] = [*fault.commands, *answer["commands"]]
                response = Response(response.status, dict(response.headers), dumps(answer))
        return response
