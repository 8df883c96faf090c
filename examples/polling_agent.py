"""A user's own agent code: queue a Graph run over MCP and poll until it is done.

This is the kind of code a third-party project writes; ``test_example_polling_agent.py``
tests it with pytest-osfoundry's fixtures on virtual time. It knows nothing of the kit.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import Iterable
from typing import Any

import httpx


class EventStream:
    """An event stream read as the SSE format says, chunk by chunk as it arrives: lines
    end in CRLF, LF or CR (a CRLF may be split between chunks); an empty line ends an
    event; its ``data`` lines, one space after the colon dropped, are joined with
    newlines; other fields and comments (``:...``) are skipped."""

    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.line = ""  # the line not yet ended
        self.after_cr = False  # the last chunk ended in CR: a LF first is that line's end
        self.data: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        """The data of each event ``chunk`` ends."""
        text = self.decoder.decode(chunk)
        if self.after_cr and text.startswith("\n"):
            text, self.after_cr = text[1:], False
        if text:
            self.after_cr = text.endswith("\r")
        *lines, self.line = re.split("\r\n|\r|\n", self.line + text)
        events = []
        for line in lines:
            field, _, value = line.partition(":")
            if field == "data":
                self.data.append(value[1:] if value.startswith(" ") else value)
            elif line == "":  # the end of an event
                events.append("\n".join(self.data))
                self.data = []
        return events


def pick(event: str, request_id: int) -> dict[str, Any] | None:
    """The answer to ``request_id`` if ``event`` carries it (an event without data, a
    notification or a request of the server's own: ``None``)."""
    msg = json.loads(event) if event.strip() else None
    if isinstance(msg, dict) and "method" not in msg and msg.get("id") == request_id:
        return msg
    return None


def answer(content_type: str, body: bytes | Iterable[bytes], request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to ``request_id`` in a reply (its body, or its chunks as they
    arrive): the JSON body, or, in an event stream (``Accept`` lets the server pick
    either), the event carrying it, read with :class:`EventStream` and no further (a
    server may leave the stream open after it)."""
    chunks = [body] if isinstance(body, bytes) else body
    if not content_type.lower().startswith("text/event-stream"):
        whole: dict[str, Any] = json.loads(b"".join(chunks))
        return whole
    stream = EventStream()
    for chunk in chunks:
        for event in stream.feed(chunk):
            if (msg := pick(event, request_id)) is not None:
                return msg
    raise ValueError(f"the event stream ended without the answer to request {request_id}")


class GraphRunner:
    """Calls osFoundry's MCP tools with plain httpx and polls with ``time.sleep``."""

    def __init__(self, mcp_url: str, token: str, http: httpx.Client | None = None) -> None:
        self.mcp_url = mcp_url
        self.http = http or httpx.Client()
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }
        self.polls = 0
        self.lost = 0  # replies lost (and the call repeated)
        self._id = 0

    def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        self._id += 1
        with self.http.stream(
            "POST",
            self.mcp_url,
            json={"jsonrpc": "2.0", "id": self._id, "method": method, "params": params},
            headers=self.headers,
        ) as reply:
            reply.raise_for_status()
            content_type = reply.headers.get("content-type", "")
            return answer(content_type, reply.iter_bytes(), self._id)["result"]

    def connect(self) -> None:
        """MCP handshake: initialize, then keep the session id and protocol version."""
        result = self._rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "example-agent", "version": "1"},
            },
        )
        self.headers["MCP-Protocol-Version"] = result["protocolVersion"]

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool; raise RuntimeError with the server's message on a tool error.

        A lost reply (an httpx transport error) repeats the same call, the same
        idempotency key included: the server queues one run however often it is asked.
        """
        for _ in range(20):
            try:
                result = self._rpc("tools/call", {"name": tool, "arguments": arguments})
            except httpx.TransportError:
                self.lost += 1
                continue
            break
        else:
            raise RuntimeError(f"{tool}: no reply in 20 tries")
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    def run_and_wait(
        self,
        graph_session_id: str,
        key: str,
        first_wait: float = 20,
        every: float = 10,
        *,
        cancel: bool = False,
    ) -> dict[str, Any]:
        """Queue a run, wait one pickup interval, then poll every ``every`` seconds
        (``cancel=True``: cancel the run once it is seen running)."""
        ticket = self.call(
            "run_graph_session", graph_session_id=graph_session_id, idempotency_key=key
        )
        time.sleep(first_wait)
        while True:
            self.polls += 1
            run = self.call("get_graph_run", command_id=ticket["command_id"])
            if run["status"] in ("completed", "failed", "cancelled"):
                return run
            if cancel and run["status"] == "running":
                self.call("cancel_graph_run", command_id=ticket["command_id"])
            time.sleep(every)
