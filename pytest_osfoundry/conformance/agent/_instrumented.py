"""The reference server behind a recording handler: what the agent suite judges.

:class:`InstrumentedMcp` wraps a :class:`~pytest_osfoundry.server.ReferenceServer`.
Every MCP request is recorded (:class:`McpCall`: when it arrived, when it was
answered, the JSON-RPC method, the tool and its arguments, the HTTP status and the
tool's decoded answer) in the :class:`McpLane` of the agent token it carried, so
checks running at once each see only their own agent. A lane also holds
:class:`AgentFault` rules, which the agent cannot tell from a real fault:

* ``drop-after`` -- serve the call, then close the connection unanswered (the reply
  lost after the server applied it);
* ``not-found`` -- serve the call as if about a run that does not exist, so the server
  answers D5 (``Graph run not found or access removed``) in its own words and era.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry import _wirejson as wirejson
from pytest_osfoundry.client import decode_answer, decode_events
from pytest_osfoundry.conformance.relay._internal import bearer_token
from pytest_osfoundry.http import DropConnection, HandlerWrapper, Request, Response
from pytest_osfoundry.server import ReferenceServer

__all__ = ["AgentFault", "InstrumentedMcp", "McpCall", "McpLane"]


@dataclass(frozen=True)
class McpCall:
    """One MCP request as the server saw it.

    ``rpc`` is the JSON-RPC method (``''`` for a request without a JSON-RPC body: a GET,
    a DELETE); ``tool`` and ``arguments`` those of a ``tools/call``; ``status`` the HTTP
    status answered (0: the connection was dropped); ``result`` the tool's structured
    answer, ``error`` its error text (a tool error, a JSON-RPC error, an HTTP refusal).
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
    """One rule a lane applies to calls of ``tool``, ``times`` times (None: always);
    ``kind`` is ``drop-after`` or ``not-found`` (see the module)."""

    tool: str
    kind: str
    times: int | None = 1
    used: int = 0


class McpLane:
    """One check's view of the server: the MCP requests its token sent, its faults."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._lock = threading.Lock()
        self.calls: list[McpCall] = []
        self.faults: list[AgentFault] = []
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
                if fault.tool == tool and (fault.times is None or fault.used < fault.times):
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


def _rpc_message(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
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

    def lane(self, token: str) -> McpLane:
        """A new lane for ``token``."""
        lane = McpLane(token)
        with self._lock:
            self._lanes[token] = lane
        return lane

    def forget(self, lane: McpLane) -> None:
        """Stop recording for ``lane``'s token."""
        with self._lock:
            self._lanes.pop(lane.token, None)

    def wake_all(self) -> None:
        """Wake whoever waits on any lane."""
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            lane.wake()

    def __call__(self, request: Request, /) -> Response:
        """Serve as the reference server does, recording MCP requests and applying faults."""
        if request.path not in (self.inner.mcp_path, self.inner.mcp_path + "/"):
            return self.inner(request)
        with self._lock:
            lane = self._lanes.get(bearer_token(request.headers.get("authorization")))
        if lane is None:
            return self.inner(request)
        arrived = time.time()
        message = _rpc_message(request.body)
        rpc = str(message.get("method", "")) if isinstance(message, dict) else ""
        params = message.get("params") if isinstance(message, dict) else None
        tool = arguments = None
        if rpc == "tools/call" and isinstance(params, dict):
            tool = params.get("name") if isinstance(params.get("name"), str) else None
            given = params.get("arguments")
            arguments = dict(given) if isinstance(given, dict) else None
        fault = lane.take_fault(tool) if tool is not None else None
        status = 0
        result = error = None
        try:
            served = request
            if fault is not None and fault.kind == "not-found" and isinstance(message, dict):
                served = _about_another_run(request, message)
            response = self.inner(served)
            status = response.status
            if fault is not None and fault.kind == "drop-after":
                status = 0
                raise DropConnection()
            if tool is not None:
                reply = decode_answer(response.status, {}, _answer_message(response))
                result = reply.structured
                if reply.kind != "result":
                    error = reply.message or reply.describe()
            return response
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
                )
            )


def _about_another_run(request: Request, message: dict[str, Any]) -> Request:
    """``request`` asking about a command id no run has (the server then answers D5)."""
    changed = copy.deepcopy(message)
    arguments = changed.get("params", {}).get("arguments")
    if isinstance(arguments, dict):
        arguments["command_id"] = str(uuid.uuid4())
    return request._replace(body=wirejson.dumps(changed))
