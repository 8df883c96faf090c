"""How a ``tools/call`` was answered, decoded without judging it (SPEC R3).

One decoder, two users:

* :class:`~pytest_osfoundry.client.McpClient` reads a tool's JSON-RPC ``result``
  with :func:`read_tool_result` and then applies its own strictness (a malformed
  answer raises :class:`~pytest_osfoundry.client.ProtocolViolation`).
* The conformance suite decodes every answer, however broken, with
  :func:`decode_answer` into a :class:`ToolReply` and judges it itself.

Nothing here raises for what a server sent: every answer decodes to one of five
kinds (:data:`ReplyKind`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pytest_osfoundry._wirejson import loads as _fast_loads

__all__ = ["ReplyKind", "ToolReply", "ToolResult", "decode_answer", "read_tool_result"]

ReplyKind = Literal["result", "tool_error", "rpc_error", "http_error", "malformed"]
"""What came back: see :class:`ToolReply`."""


@dataclass(slots=True)
class ToolResult:
    """The parts of a ``tools/call`` ``result`` object that clients read (read them,
    do not set them: made for every tool call, a slotted record costs the least).

    * ``is_error`` -- ``isError`` is ``true``.
    * ``text`` -- ``content[0].text`` when that is a string, else ``None``.
    * ``structured_content`` -- ``structuredContent`` exactly as sent (any JSON value,
      ``None`` when absent).
    * ``structured`` -- the result's object: ``structuredContent`` when it is an object,
      else ``content[0].text`` parsed when that is a JSON object, else ``None``.
    """

    is_error: bool
    text: str | None
    structured_content: Any
    structured: dict[str, Any] | None


def _parsed_object(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        parsed = _fast_loads(text, json.loads)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def read_tool_result(result: object) -> ToolResult:
    """Read a ``tools/call`` ``result`` (any JSON value; a non-object has no parts).

    ``content[0].text`` is parsed only when it is needed: when the answer is no error
    and carries no ``structuredContent`` object.
    """
    if not isinstance(result, dict):
        return ToolResult(False, None, None, None)
    content = result.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str):
        text = None
    is_error = result.get("isError") is True
    structured_content = result.get("structuredContent")
    if isinstance(structured_content, dict):
        structured: dict[str, Any] | None = structured_content
    else:
        structured = None if is_error else _parsed_object(text)
    return ToolResult(is_error, text, structured_content, structured)


@dataclass
class ToolReply:
    """How the server answered one JSON-RPC request, decoded without judging it.

    * ``result`` -- a JSON-RPC result that is not ``isError``; ``structured`` holds
      ``structuredContent`` (or the object in ``content[0].text``).
    * ``tool_error`` -- a result with ``isError: true``; ``message`` is ``content[0].text``.
    * ``rpc_error`` -- a JSON-RPC error object (2xx); ``code``/``message`` are its own.
    * ``http_error`` -- a non-2xx status (``code``/``message`` from a JSON-RPC error
      body when there is one).
    * ``malformed`` -- a 2xx reply that is no JSON-RPC answer at all.

    ``raw`` is the JSON-RPC message's exact bytes (the body, or the SSE event's data).
    """

    kind: ReplyKind
    status: int
    headers: dict[str, str]
    raw: bytes = b""
    result: Any = None
    structured: dict[str, Any] | None = None
    message: str | None = None
    code: int | None = None

    @property
    def refused(self) -> bool:
        """Whether the request was refused in any way a client can tell."""
        return self.kind in ("tool_error", "rpc_error", "http_error")

    def describe(self) -> str:
        """One phrase saying what came back."""
        if self.kind == "result":
            return "a success result"
        if self.kind == "tool_error":
            return f"an isError result {self.message!r}"
        if self.kind == "rpc_error":
            return f"JSON-RPC error {self.code} {self.message!r}"
        if self.kind == "http_error":
            extra = f" (JSON-RPC error {self.code} {self.message!r})" if self.code else ""
            return f"HTTP {self.status}{extra}"
        return f"HTTP {self.status} with no JSON-RPC answer"


def decode_answer(
    status: int, headers: Mapping[str, str], message: object, raw: bytes = b""
) -> ToolReply:
    """Decode the JSON-RPC ``message`` an HTTP reply with ``status`` carried.

    ``message`` is the parsed JSON-RPC answer, or ``None`` when the reply held none;
    ``headers`` are kept as given (lower-case names are what readers expect).
    """
    head = dict(headers)
    rpc = (
        message
        if isinstance(message, dict) and ("result" in message or "error" in message)
        else None
    )
    code: int | None = None
    text: str | None = None
    err = rpc.get("error") if rpc is not None else None
    if isinstance(err, dict):
        code = err.get("code") if isinstance(err.get("code"), int) else None
        text = err.get("message") if isinstance(err.get("message"), str) else None
    if not 200 <= status <= 299:
        return ToolReply("http_error", status, head, raw, None, None, text, code)
    if rpc is None:
        return ToolReply("malformed", status, head, raw)
    if "error" in rpc:
        return ToolReply("rpc_error", status, head, raw, None, None, text, code)
    result = rpc["result"]
    read = read_tool_result(result)
    if read.is_error:
        return ToolReply("tool_error", status, head, raw, result, None, read.text)
    return ToolReply("result", status, head, raw, result, read.structured)
