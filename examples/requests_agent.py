"""A user's own agent on requests (sync): queue a Graph run over MCP, poll it, cancel it.

The same thirty lines as :mod:`aiohttp_agent`, in the idiom of a sync team: JSON-RPC
over ``requests.Session.post``, queue with an idempotency key, ``time.sleep(20)``,
then poll every 10 s until the run ends; a lost reply (``requests.ConnectionError``)
repeats the same call with the same key; ``cancel=True`` cancels the run once it is
seen running. It knows nothing of the kit: ``test_example_stacks.py`` tests it through
``osf_requests`` with ``patch_sleep``.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import json
import re
import time
from collections.abc import Iterable
from typing import Any

import requests
import urllib3

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


def call(http: requests.Session, url: str, tool: str, **args: Any) -> dict[str, Any]:
    """Call ``tool``, repeating it while its reply is lost; its structured result."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}
    for _ in range(20):
        try:
            # stream=True: an event-stream answer is read as it arrives, up to its event
            # (a server may leave the stream open after it)
            reply = http.post(url, json=body, timeout=30, stream=True)
        except requests.ConnectionError:  # the reply was lost: ask again, the same way
            continue
        with reply:
            reply.raise_for_status()
            # read1: what has arrived (at least a byte), not a whole 64 kB block
            arrived = iter(functools.partial(reply.raw.read1, 65_536), b"")
            try:
                message = answer(reply.headers.get("Content-Type", ""), arrived, 1)
            except (requests.ConnectionError, urllib3.exceptions.HTTPError):
                continue  # the reply was cut: lost, ask again
        result: dict[str, Any] = message["result"]
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result['content'][0]['text']}")
        structured: dict[str, Any] = result["structuredContent"]
        return structured
    raise RuntimeError(f"{tool}: no reply in 20 tries")


def run_graph(
    url: str, token: str, graph_session_id: str, key: str, *, cancel: bool = False
) -> dict[str, Any]:
    """Queue a run under ``key``, poll until it ends (cancelling it once running)."""
    with requests.Session() as http:
        http.headers.update({"Authorization": f"Bearer {token}",
                             "MCP-Protocol-Version": "2025-11-25",
                             "Accept": "application/json, text/event-stream"})
        ticket = call(http, url, "run_graph_session",
                      graph_session_id=graph_session_id, idempotency_key=key)
        time.sleep(20)
        for _ in itertools.count():
            run = call(http, url, "get_graph_run", command_id=ticket["command_id"])
            if run["status"] in TERMINAL:
                return run
            if cancel and run["status"] == "running":
                call(http, url, "cancel_graph_run", command_id=ticket["command_id"])
            time.sleep(10)
    raise AssertionError("unreachable")
