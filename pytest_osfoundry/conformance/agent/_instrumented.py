"""The reference server behind a recording handler: what the agent suite judges.

:class:`InstrumentedMcp` wraps a :class:`~pytest_osfoundry.server.ReferenceServer`.
Every MCP request is recorded (:class:`McpCall`: when it arrived, when it was
answered, the JSON-RPC method, the tool and its arguments, the HTTP status, the
tool's decoded answer and the ``Mcp-Session-Id`` it named) in the :class:`McpLane` of
the agent token it carried, so checks running at once each see only their own agent.
Every request carrying a lane's token anywhere, on any path, is also searched for it:
each place other than the ``Authorization: Bearer`` header where it appears (the URL,
another header, the body) is noted in :attr:`McpLane.leaks`.

A lane also holds :class:`AgentFault` rules for the calls of one tool (``*``: every
tool), which the agent cannot tell from a real fault:

* ``drop-after`` -- serve the call, then close the connection unanswered (the reply
  lost after the server applied it); with ``end_session`` the server also ends the MCP
  session the call named, so the agent's next request naming it is answered ``404``;
* ``status-after`` -- serve the call, then answer HTTP ``status`` (503 by default: a
  gateway failing after the server applied it) instead of the tool's answer;
* ``hold-after`` -- serve the call and hold its answer: the connection is closed
  unanswered once the agent calls the same tool again (its own time-out passed), the
  check ends, or ``seconds`` pass;
* ``open-stream`` -- serve the call and answer it as an event stream (the endpoint's
  own encoding) that is left open after the answer's event, until the check ends
  (:class:`~pytest_osfoundry.http.KeptOpen`), as some servers do;
* ``not-found`` -- serve the call as if about a run that does not exist, so the server
  answers D5 (``Graph run not found or access removed``) in its own words and era.

A lane may be ``legacy_only``: its requests are then served by a sibling of the
reference server that speaks only the legacy revisions (those with MCP sessions,
2025-11-25 and 2025-06-18), over the same state; :meth:`InstrumentedMcp.end_session`
ends the session a lane's agent uses now, as a server may at any time.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pytest_osfoundry import _wirejson as wirejson
from pytest_osfoundry.client import decode_answer, decode_events
from pytest_osfoundry.conformance.expected import LEGACY_REVISIONS, SESSION_ID_HEADER
from pytest_osfoundry.conformance.relay._internal import bearer_token
from pytest_osfoundry.http import (
    DropConnection,
    HandlerWrapper,
    KeptOpen,
    Request,
    Response,
    json_response,
)
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._internal import BadJson, event_stream, parse_body

__all__ = ["AgentFault", "InstrumentedMcp", "McpCall", "McpLane"]


@dataclass(frozen=True)
class McpCall:
    """One MCP request as the server saw it.

    ``rpc`` is the JSON-RPC method (``''`` for a request without a JSON-RPC body: a GET,
    a DELETE); ``tool`` and ``arguments`` those of a ``tools/call``; ``status`` the HTTP
    status answered (0: the connection was dropped); ``result`` the tool's structured
    answer, ``error`` its error text (a tool error, a JSON-RPC error, an HTTP refusal);
    ``session`` the ``Mcp-Session-Id`` the request named (``None``: none).
    """

    at: float
    answered: float
    method: str
    rpc: str
    tool: str | None
    arguments: dict[str, Any] | None
    status: int
    result: dict[str, Any] | None = None
    error: str | None = None
    session: str | None = None

    def as_dict(self, start: float) -> dict[str, Any]:
        """The call for a report: seconds since ``start``, what was asked and answered."""
        return {
            "at": round(self.at - start, 3),
            "method": self.method,
            "rpc": self.rpc,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "result": self.result,
            "error": self.error,
        }


@dataclass
class AgentFault:
    """One rule a lane applies to calls of ``tool`` (``*``: every tool), ``times`` times
    (None: always); ``kind`` is ``drop-after``, ``status-after``, ``hold-after``,
    ``open-stream`` or ``not-found`` (see the module); ``status`` the HTTP status of
    ``status-after``; ``seconds`` the longest hold of ``hold-after``; ``end_session``
    ends the MCP session the call named as well (``drop-after``)."""

    tool: str
    kind: str
    times: int | None = 1
    used: int = 0
    status: int = 503
    seconds: float = 60.0
    end_session: bool = False


class McpLane:
    """One check's view of the server: the MCP requests its token sent, its faults."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._lock = threading.Lock()
        self.calls: list[McpCall] = []
        self.faults: list[AgentFault] = []
        self.leaks: list[str] = []
        """Where the token appeared other than the Authorization header, one line each."""
        self.legacy_only = False
        """Whether the lane's requests are served by the legacy-only sibling (see module)."""
        self.ended = threading.Event()
        """Set when the check has ended: held answers are dropped, open streams closed."""
        self.arrived = threading.Condition(self._lock)

    def add_fault(self, fault: AgentFault) -> AgentFault:
        """Apply ``fault`` from now on."""
        with self._lock:
            self.faults.append(fault)
        return fault

    def take_fault(self, tool: str | None) -> AgentFault | None:
        """The first rule for ``tool`` with uses left, its use counted."""
        with self._lock:
            for fault in self.faults:
                if fault.tool in (tool, "*") and (fault.times is None or fault.used < fault.times):
                    fault.used += 1
                    return fault
        return None

    def record(self, call: McpCall) -> None:
        """Keep ``call``; wake whoever waits."""
        with self._lock:
            self.calls.append(call)
            self.arrived.notify_all()

    def snapshot(self) -> list[McpCall]:
        """The calls so far, oldest first."""
        with self._lock:
            return list(self.calls)

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` holds, woken by each call; False after ``timeout``.
        ``predicate`` runs with the lane's lock held: it reads :attr:`calls`, never
        :meth:`snapshot`."""
        with self._lock:
            return self.arrived.wait_for(predicate, timeout)

    def wake(self) -> None:
        """Wake whoever waits (they look again at once)."""
        with self._lock:
            self.arrived.notify_all()

    def end(self) -> None:
        """The check has ended: release what the lane's faults hold."""
        self.ended.set()
        self.wake()

    def leaked(self, where: str) -> None:
        """Note a place the token appeared other than the Authorization header."""
        with self._lock:
            if len(self.leaks) < 100:
                self.leaks.append(where)


def _rpc_message(raw: bytes) -> Any:
    """The JSON a body carries as the server reads it (strict, depth-bounded), or
    ``None``: what the server refused as not JSON is recorded as no message."""
    try:
        return parse_body(raw) if raw else None
    except BadJson:
        return None


def _answer_message(response: Response) -> Any:
    """The JSON-RPC message a reply carried: its JSON body, or its event stream's last
    message with a ``result`` or an ``error``."""
    kind = response.headers.get("content-type", "")
    if "text/event-stream" in kind:
        found = None
        for event in decode_events(response.body)[0]:
            message = _rpc_message(event.data.encode("utf-8"))
            if isinstance(message, dict) and ("result" in message or "error" in message):
                found = message
        return found
    return _rpc_message(response.body)


class InstrumentedMcp(HandlerWrapper[ReferenceServer]):
    """The reference server, recording MCP requests per agent token (see the module)."""

    def __init__(self, inner: ReferenceServer) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self._lanes: dict[str, McpLane] = {}
        self._legacy: ReferenceServer | None = None

    @property
    def legacy(self) -> ReferenceServer:
        """The reference server as one speaking only the legacy revisions, over the same
        state; made when first needed, so it names the URL the door announced."""
        with self._lock:
            if self._legacy is None:
                self._legacy = self.inner.sibling(protocols=LEGACY_REVISIONS)
            return self._legacy

    def lane(self, token: str) -> McpLane:
        """A new lane for ``token``."""
        lane = McpLane(token)
        with self._lock:
            self._lanes[token] = lane
        return lane

    def forget(self, lane: McpLane) -> None:
        """Stop recording for ``lane``'s token."""
        lane.end()
        with self._lock:
            self._lanes.pop(lane.token, None)

    def wake_all(self) -> None:
        """Wake whoever waits on any lane."""
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            lane.wake()

    def end_session(self, lane: McpLane) -> str | None:
        """End the MCP session ``lane``'s agent named last (legacy only), as a server may
        at any time: its next request naming it is answered ``404``. The session's id,
        or ``None`` when the agent named none or it had ended already."""
        for call in reversed(lane.snapshot()):
            if call.session is not None:
                app = self.legacy if lane.legacy_only else self.inner
                return call.session if app.mcp.end_session(call.session) else None
        return None

    def _lane_of(self, request: Request) -> McpLane | None:
        """The lane whose token ``request`` carries: in its Authorization header, else
        anywhere (the URL, another header, the body)."""
        with self._lock:
            lane = self._lanes.get(bearer_token(request.headers.get("authorization")))
            if lane is not None:
                return lane
            lanes = list(self._lanes.values())
        return next((lane for lane in lanes if _places(request, lane.token)), None)

    def __call__(self, request: Request, /) -> Response:
        """Serve as the reference server does, recording MCP requests and applying faults."""
        lane = self._lane_of(request)
        if lane is None:
            return self.inner(request)
        for where in _places(request, lane.token):
            lane.leaked(f"{request.method} {request.path}: {where}")
        app = self.legacy if lane.legacy_only else self.inner
        if request.path not in (self.inner.mcp_path, self.inner.mcp_path + "/"):
            return app(request)
        arrived = time.time()
        message = _rpc_message(request.body)
        rpc = str(message.get("method", "")) if isinstance(message, dict) else ""
        params = message.get("params") if isinstance(message, dict) else None
        tool = arguments = None
        if rpc == "tools/call" and isinstance(params, dict):
            tool = params.get("name") if isinstance(params.get("name"), str) else None
            given = params.get("arguments")
            arguments = dict(given) if isinstance(given, dict) else None
        session = request.headers.get(SESSION_ID_HEADER.lower())
        fault = lane.take_fault(tool) if tool is not None else None
        status = 0
        result = error = None
        try:
            served = request
            if fault is not None and fault.kind == "not-found" and isinstance(message, dict):
                served = _about_another_run(request, message)
            response = app(served)
            status = response.status
            if fault is not None:
                response = self._fault(lane, fault, arrived, tool, session, app, response)
                status = response.status
            if tool is not None:
                reply = decode_answer(response.status, {}, _answer_message(response))
                result = reply.structured
                if reply.kind != "result":
                    error = reply.message or reply.describe()
            return response
        except DropConnection:
            status = 0
            raise
        finally:
            lane.record(
                McpCall(
                    arrived,
                    time.time(),
                    request.method,
                    rpc,
                    tool,
                    arguments,
                    status,
                    result,
                    error,
                    session,
                )
            )

    @staticmethod
    def _fault(
        lane: McpLane,
        fault: AgentFault,
        arrived: float,
        tool: str | None,
        session: str | None,
        app: ReferenceServer,
        response: Response,
    ) -> Response:
        """What the agent gets of a call ``fault`` applies to, once ``app`` served it."""
        if fault.kind == "drop-after":
            if fault.end_session and session is not None:
                app.mcp.end_session(session)
            raise DropConnection()
        if fault.kind == "status-after":
            return json_response(fault.status, {"error": "service unavailable"})
        if fault.kind == "hold-after":

            def asked_again() -> bool:  # called with the lane's lock held
                return lane.ended.is_set() or any(
                    c.tool == tool and c.at > arrived for c in lane.calls
                )

            lane.wait_for(asked_again, fault.seconds)
            raise DropConnection()
        if fault.kind == "open-stream" and response.status == 200:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                headers = {k: v for k, v in response.headers.items() if k != "content-type"}
                response = event_stream(response.body, headers)
            return KeptOpen(200, response.headers, response.body, until=lane.ended)
        return response


def _places(request: Request, token: str) -> list[str]:
    """Where ``token`` appears in ``request`` other than its ``Authorization: Bearer``
    header: the URL, another header, the body (or a malformed Authorization)."""
    found: list[str] = []
    if token in request.path or token in unquote(request.path):
        found.append("in the URL's path")
    if token in request.query or token in unquote(request.query):
        found.append("in the URL's query string")
    for name, value in request.headers.items():
        if name == "authorization":
            if token in value and bearer_token(value) != token:
                found.append("in an Authorization header that is not `Bearer <token>`")
        elif token in value:
            found.append(f"in the {name} header")
    if token.encode("utf-8") in request.body:
        found.append("in the request body")
    return found


def _about_another_run(request: Request, message: dict[str, Any]) -> Request:
    """``request`` asking about a command id no run has (the server then answers D5)."""
    changed = copy.deepcopy(message)
    arguments = changed.get("params", {}).get("arguments")
    if isinstance(arguments, dict):
        arguments["command_id"] = str(uuid.uuid4())
    return request._replace(body=wirejson.dumps(changed))
