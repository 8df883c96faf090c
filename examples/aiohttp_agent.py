"""A user's own agent on aiohttp: queue a Graph run over MCP, poll it, cancel it.

The thirty lines an aiohttp team writes: JSON-RPC over ``ClientSession.post``, queue
with an idempotency key, wait one pickup interval (20 s), then poll every 10 s until
the run ends; a lost reply (aiohttp's ``ClientError``) repeats the same call, the same
key included (the server queues one run however often it is asked); ``cancel=True``
cancels the run once it is seen running. It knows nothing of the kit:
``test_example_stacks.py`` tests it over ``osf_loopback`` on the virtual loop.
"""

from __future__ import annotations

import asyncio
import codecs
import itertools
import json
import re
from collections.abc import Iterable
from typing import Any

import aiohttp

TERMINAL = ("completed", "failed", "cancelled")


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


async def read_answer(reply: aiohttp.ClientResponse, request_id: int) -> dict[str, Any]:
    """:func:`answer` as the reply arrives: an event stream read no further than the
    answer's event (a server may leave it open after it)."""
    content_type = reply.headers.get("Content-Type", "")
    if not content_type.lower().startswith("text/event-stream"):
        return answer(content_type, await reply.read(), request_id)
    stream = EventStream()
    async for chunk in reply.content.iter_any():
        for event in stream.feed(chunk):
            if (msg := pick(event, request_id)) is not None:
                return msg
    raise ValueError(f"the event stream ended without the answer to request {request_id}")


async def call(http: aiohttp.ClientSession, url: str, tool: str, **args: Any) -> dict[str, Any]:
    """Call ``tool``, repeating it while its reply is lost; its structured result."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}
    for _ in range(20):
        try:
            async with http.post(url, json=body) as reply:
                reply.raise_for_status()
                message = await read_answer(reply, 1)
                result: dict[str, Any] = message["result"]
        except aiohttp.ClientError:  # the reply was lost: ask again, the same way
            continue
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result['content'][0]['text']}")
        structured: dict[str, Any] = result["structuredContent"]
        return structured
    raise RuntimeError(f"{tool}: no reply in 20 tries")


async def run_graph(
    url: str, token: str, graph_session_id: str, key: str, *, cancel: bool = False
) -> dict[str, Any]:
    """Queue a run under ``key``, poll until it ends (cancelling it once running)."""
    headers = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25",
               "Accept": "application/json, text/event-stream"}
    async with aiohttp.ClientSession(headers=headers) as http:
        ticket = await call(http, url, "run_graph_session",
                            graph_session_id=graph_session_id, idempotency_key=key)
        await asyncio.sleep(20)
        for _ in itertools.count():
            run = await call(http, url, "get_graph_run", command_id=ticket["command_id"])
            if run["status"] in TERMINAL:
                return run
            if cancel and run["status"] == "running":
                await call(http, url, "cancel_graph_run", command_id=ticket["command_id"])
            await asyncio.sleep(10)
    raise AssertionError("unreachable")
