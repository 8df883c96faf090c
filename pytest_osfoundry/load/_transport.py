"""The load's wire: one connection a user, and a transport that tells the load's
statistics about every tool call and relay action.

:func:`wire` makes a user's wire transport (the kit's public ``HttpTransport``, one
connection kept); :func:`agent_client` a plain tool client over one (the drain's).

:class:`StatsTransport` wraps **any** :class:`~pytest_osfoundry.client.Transport` and
reports each exchange to ``fire`` (Locust's ``events.request.fire``) under the name a
server team reads: ``MCP run_graph_session`` (a tool call, by the tool's name),
``MCP initialize`` (another MCP method), ``relay sync`` / ``start`` / ``control`` /
``complete`` (the relay API). The kit's clients run over it unchanged.

An exchange counts as a failure when no reply came back
(:class:`~pytest_osfoundry.client.ReplyLost`, re-raised to the caller), when the
status is 4xx or 5xx, or when the JSON-RPC answer to the request -- read from a JSON
body or an event stream by the kit's one reply reader,
:func:`~pytest_osfoundry.client.read_answer` -- is an ``error`` or an ``isError`` tool
result, or is missing. Put it **outermost**, above any fault-injecting transport:
a reply dropped after the server answered (:class:`~pytest_osfoundry.faults.DropReplies`)
then reaches it as the ``ReplyLost`` the client sees, and counts as the failure it
is to the client, never as a success.

Each exchange's ``context`` (Locust's per-request context) holds the user's own
context given at construction (which account, which credential), the HTTP
``status`` (``None`` when no reply came back) and ``refused``: ``"token"`` when the
server refused the credential (401 or 403), ``"url"`` when a URL that exists on any
working target answered 404 (:func:`refusal_of`), else ``None``.

This module imports nothing of Locust: ``fire`` is any callable taking Locust's
keyword arguments.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from pytest_osfoundry._vocabulary import RELAY_COMMANDS, RELAY_SYNC
from pytest_osfoundry._wirejson import loads
from pytest_osfoundry.client import (
    HttpTransport,
    McpClient,
    ProtocolViolation,
    ReplyLost,
    Transport,
    read_answer,
)
from pytest_osfoundry.client._internal import id_of_request, split_target
from pytest_osfoundry.http import Response

__all__ = [
    "EXCHANGE_TIMEOUT",
    "MCP",
    "RELAY",
    "ExchangeFailed",
    "StatsTransport",
    "agent_client",
    "name_of",
    "refusal_of",
    "wire",
]

#: Seconds one exchange may take before it counts as a lost reply.
EXCHANGE_TIMEOUT = 10.0


def wire() -> Transport:
    """A new wire transport for one user (its own connection): the kit's public one.

    Everything above it (``StatsTransport``, the faults) wraps any ``Transport``.
    """
    return HttpTransport(timeout=EXCHANGE_TIMEOUT, max_bytes=16 * 1024 * 1024, keep=1)


def agent_client(mcp_url: str, token: str) -> McpClient:
    """A plain tool client of one agent (the drain's: no statistics, no faults)."""
    return McpClient(wire(), mcp_url, token)


#: The request types the statistics show (Locust's "Type" column).
MCP = "MCP"
RELAY = "relay"

Fire = Callable[..., None]


class ExchangeFailed(Exception):
    """A reply that is a failure to the statistics (an HTTP error, a JSON-RPC error)."""


def name_of(method: str, url: str, body: bytes) -> tuple[str, str]:
    """``(request type, name)`` of one request, as the statistics list it."""
    kind, name, _ = _classify(method, url, body)
    return kind, name


def _classify(method: str, url: str, body: bytes) -> tuple[str, str, int | str | None]:
    """:func:`name_of`, and the JSON-RPC id of an MCP request (``None``: none to judge)."""
    path, _ = split_target(url)
    if path.endswith(RELAY_SYNC):
        return RELAY, "sync", None
    at = path.find(RELAY_COMMANDS)
    if at >= 0:
        return RELAY, path.rsplit("/", 1)[-1], None
    if method.upper() != "POST":
        return MCP, method.upper(), None
    try:
        message = loads(body, json.loads)
    except ValueError:
        return MCP, "unparsable", None
    if not isinstance(message, dict):
        return MCP, "batch", None
    rpc = message.get("method")
    rid = id_of_request(message)  # None: a notification, no answer to judge
    if rpc == "tools/call":
        params = message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        return MCP, str(tool), rid
    return MCP, str(rpc), rid


def refusal_of(kind: str, name: str, status: int, in_session: bool) -> str | None:
    """Whether an answer refused the target's credential or URL, and which.

    ``"token"``: 401 or 403, on any request (the token is unknown, or not one of its
    role: an agent's on the relay API, a desktop's on a tool call). ``"url"``: 404 to
    the relay sync or to an MCP request outside a session (``in_session`` false) --
    paths that exist on every working target; a 404 elsewhere has its own meaning (an
    unknown command on the relay API, an expired MCP session). ``None`` otherwise.
    """
    if status in (401, 403):
        return "token"
    if status == 404 and ((kind == RELAY and name == "sync") or (kind == MCP and not in_session)):
        return "url"
    return None


def _answer_failure(response: Response, request_id: int | str) -> str | None:
    """Why the JSON-RPC answer to ``request_id`` is a failure, or ``None``."""
    try:
        message = read_answer(response, request_id).message
    except ProtocolViolation as err:
        return f"no JSON-RPC answer: {err}"
    if "error" in message:
        return "JSON-RPC error"
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "isError tool result"
    return None


class StatsTransport:
    """Reports every exchange through ``inner`` to ``fire`` (see the module docstring)."""

    __slots__ = ("context", "fire", "inner")

    def __init__(
        self, inner: Transport, fire: Fire, context: Mapping[str, Any] | None = None
    ) -> None:
        if not callable(getattr(inner, "request", None)):
            raise TypeError(f"inner must be a Transport, got {inner!r}")
        if not callable(fire):
            raise TypeError(f"fire must be callable, got {fire!r}")
        self.inner = inner
        self.fire = fire
        self.context = dict(context or {})

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send through ``inner``; report the exchange, a lost reply as a failure."""
        kind, name, request_id = _classify(method, url, body)
        started = time.perf_counter()
        try:
            response = self.inner.request(method, url, headers, body)
        except ReplyLost as err:
            self._fire(kind, name, started, 0, err, None, None)
            raise
        failure: Exception | None = None
        if response.status >= 400:
            failure = ExchangeFailed(f"HTTP {response.status}")
        elif request_id is not None:
            why = _answer_failure(response, request_id)
            failure = ExchangeFailed(why) if why else None
        in_session = any(k.lower() == "mcp-session-id" for k in headers)
        refused = refusal_of(kind, name, response.status, in_session)
        self._fire(kind, name, started, len(response.body), failure, response.status, refused)
        return response

    def _fire(
        self, kind: str, name: str, started: float, length: int, failure: Exception | None,
        status: int | None, refused: str | None,
    ) -> None:
        context: dict[str, Any] = {**self.context, "status": status, "refused": refused}
        self.fire(
            request_type=kind,
            name=name,
            response_time=(time.perf_counter() - started) * 1000.0,
            response_length=length,
            exception=failure,
            context=context,
        )
