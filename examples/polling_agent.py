"""A user's own agent code: queue a Graph run over MCP and poll until it is done.

This is the kind of code a third-party project writes; ``test_example_polling_agent.py``
tests it with pytest-osfoundry's fixtures on virtual time. It knows nothing of the kit.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx


def answer(content_type: str, body: bytes, request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to ``request_id`` in a reply: the JSON body, or, in an event
    stream (``Accept`` lets the server pick either), the event carrying it, read as the
    SSE format says: lines end in CRLF, LF or CR; an empty line ends an event; its
    ``data`` lines, one space after the colon dropped, are joined with newlines;
    comments (``:...``), events without data and the server's own requests are skipped."""
    if not content_type.lower().startswith("text/event-stream"):
        whole: dict[str, Any] = json.loads(body)
        return whole
    events, data = [], []
    for line in re.split("\r\n|\r|\n", body.decode("utf-8-sig")):
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        elif line == "":  # the end of an event
            events.append("\n".join(data))
            data = []
    for text in events:
        msg = json.loads(text) if text.strip() else None  # a comment or an empty event: None
        if isinstance(msg, dict) and "method" not in msg and msg.get("id") == request_id:
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
        reply = self.http.post(
            self.mcp_url,
            json={"jsonrpc": "2.0", "id": self._id, "method": method, "params": params},
            headers=self.headers,
        )
        reply.raise_for_status()
        return answer(reply.headers.get("content-type", ""), reply.content, self._id)["result"]

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
