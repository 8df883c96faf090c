"""Raw HTTP for one check: every request through one recorder, replies decoded, not judged.

All of a check's requests go through one
:class:`~pytest_osfoundry.client.RecordingTransport`, so a failure can show the
exchanges that led to it and a ``curl`` line replaying the decisive one
(:meth:`Wire.decisive` picks it; the latest exchange by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from pytest_osfoundry.client import (
    DeadlineExceeded,
    Exchange,
    McpClient,
    OsfClientError,
    ProtocolViolation,
    RecordingTransport,
    ToolReply,
    Transport,
    decode_answer,
    read_answer,
)
from pytest_osfoundry.client._internal import request_body
from pytest_osfoundry.conformance.scheduling._internal import Scope, guarded
from pytest_osfoundry.conformance.server._liveness import watch
from pytest_osfoundry.conformance.server._target import Target
from pytest_osfoundry.conformance.server._wire_schema import SchemaWatch, answer_of, ledger_of
from pytest_osfoundry.conformance.suite._internal import Expect
from pytest_osfoundry.http import Response

__all__ = ["CountingTransport", "Wire", "answer_of", "decode_reply"]


class CountingTransport:
    """Forwards to ``inner``, counts the requests sent (lost replies included) and
    notes whether one ran out of time."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.count = 0
        self.counting = True
        self.timed_out = False

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Count (unless counting was stopped), then forward."""
        if self.counting:
            self.count += 1
        try:
            return self.inner.request(method, url, headers, body)
        except DeadlineExceeded:
            self.timed_out = True
            raise


def decode_reply(reply: Response, request_id: int | str | None = None) -> ToolReply:
    """Decode an MCP reply into a :class:`~pytest_osfoundry.client.ToolReply`, whatever
    it holds: the JSON body, or the event stream's response to ``request_id`` (``None``:
    its first response), read by the kit's one reply reader; a reply holding no
    JSON-RPC answer decodes as such."""
    headers = {k.lower(): v for k, v in reply.headers.items()}
    try:
        answer = read_answer(reply, request_id)
    except ProtocolViolation:
        return decode_answer(reply.status, headers, None)
    return decode_answer(reply.status, headers, answer.message, answer.raw)


class Wire:
    """The check's HTTP: raw requests, JSON-RPC requests and tool calls, and the record."""

    def __init__(self, target: Target, expect: Expect) -> None:
        self._target = target
        self._expect = expect
        self._guard = guarded(target, watch(target, target.transport))
        self._counter = CountingTransport(self._guard)
        self.recorder = RecordingTransport(SchemaWatch(self._counter, ledger_of(target)), keep=40)
        """Every exchange of the check (the latest 40); each JSON-RPC answer validated
        against MCP's schema on the way
        (:mod:`~pytest_osfoundry.conformance.server._wire_schema`)."""
        self._decisive: Exchange | None = None
        self._shown: list[Exchange] = []

    def http(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> Response:
        """Send one raw request through the recorder; any status is returned."""
        try:
            return self.recorder.request(method, url, dict(headers or {}), body)
        except OsfClientError as err:
            self._expect.fail(f"{method} {url}: {err}")

    def initialized(self, client: McpClient) -> McpClient:
        """``client`` ready to send: its era settled, ``initialize`` run in the legacy era."""
        if not client.ready:
            try:
                client.connect()
            except OsfClientError as err:
                self._expect.fail(f"connecting ({client.protocol}) failed: {err}")
        return client

    def rpc(
        self,
        client: McpClient,
        method: str,
        params: Mapping[str, Any] | None = None,
        rpc_id: int | None = None,
    ) -> Response:
        """POST one JSON-RPC request on ``client``'s session (a fresh id unless given)."""
        self.initialized(client)
        if rpc_id is None:
            rpc_id = self._target.next_rpc_id()
        sent = client.envelope(method, params)  # with _meta in the modern era
        name = sent.get("name") if method == "tools/call" and sent else None
        body = request_body(method, sent, rpc_id)
        headers = client.request_headers(method, name if isinstance(name, str) else None)
        return self.http("POST", client.url, headers, body)

    def call(self, client: McpClient, tool: str, arguments: Mapping[str, Any]) -> ToolReply:
        """Call ``tool`` as ``client`` and decode the answer, whatever it is."""
        self.initialized(client)
        try:
            reply = client.call_tool_raw(tool, arguments)
        except OsfClientError as err:
            self._expect.fail(f"tools/call {tool}: {err}")
        return decode_reply(reply)

    def hold(self, scope: Scope, sharing: str | None = None) -> AbstractContextManager[None]:
        """Hold ``scope`` for this check while the block runs: the other checks of this
        process send no request it excludes meanwhile, but those holding ``sharing`` the
        same list (:mod:`~pytest_osfoundry.conformance.scheduling._shared_list`)."""
        return self._guard.hold(scope, sharing)

    @property
    def requests(self) -> int:
        """How many HTTP requests the check has sent so far."""
        return self._counter.count

    @property
    def timed_out(self) -> bool:
        """Whether one of the check's requests ran out of time (its clean-up then
        sends nothing more: one deadline per check against a target that hangs)."""
        return self._counter.timed_out

    def stop_counting(self) -> None:
        """Leave the requests sent from now on (clean-up) out of :attr:`requests`."""
        self._counter.counting = False

    def forget_latest(self) -> None:
        """Leave the latest exchange out of the check's record (it proved nothing)."""
        self.recorder.forget_last()

    def decisive(self) -> None:
        """Mark the latest exchange as the one a failure's ``curl`` line replays."""
        exchanges = self.recorder.exchanges
        if exchanges:
            self._decisive = exchanges[-1]

    def show(self, exchange: Exchange) -> None:
        """Report ``exchange`` (another check's, the evidence of this one) as decisive."""
        self._shown.append(exchange)
        self._decisive = exchange

    def exchanges(self) -> tuple[list[Exchange], Exchange | None]:
        """The check's recorded exchanges and the decisive one (the latest by default)."""
        history = self.recorder.exchanges + self._shown
        decisive = self._decisive or (history[-1] if history else None)
        return history, decisive
