"""The JSON-RPC envelope of MCP's Streamable HTTP: reading one answer, strictly.

An answer comes as ``application/json`` or as a ``text/event-stream`` (WHATWG
rules, :func:`parse_sse`); :class:`AnswerReader` finds the response to one request
id in it and returns its ``result`` or raises what went wrong: a non-2xx status as
:class:`~pytest_osfoundry.client._errors.HttpStatusError`, an error object as
:class:`~pytest_osfoundry.client._errors.JsonRpcError`, anything the protocol does
not allow as :class:`~pytest_osfoundry.client._errors.ProtocolViolation` (the
conformance suite judges servers with it, so nothing is guessed around). Every text
taken from the answer is masked before it reaches a message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pytest_osfoundry._wirejson import loads as _fast_loads
from pytest_osfoundry.client._errors import HttpStatusError, JsonRpcError, ProtocolViolation
from pytest_osfoundry.http import Response

__all__ = ["AnswerReader", "header_value", "id_matches", "parse_sse", "parse_sse_rest"]

_loads = json.JSONDecoder().decode  # str only: JSON on the wire is UTF-8 (RFC 8259)


def _lenient(data: bytes | str) -> Any:
    """The standard library's reading of a reply (UTF-8 only; ``NaN`` tolerated)."""
    return _loads(data.decode("utf-8") if isinstance(data, bytes) else data)


def parse_sse(text: str) -> list[tuple[str, str]]:
    """The events of a ``text/event-stream`` body, as ``(event type, data)`` pairs.

    Follows the WHATWG rules: lines end in CRLF, LF or CR; lines starting with
    ``:`` are comments; ``data:`` lines of one event are joined with newlines; one
    space after the colon is dropped; a blank line ends an event; an event whose
    data is empty (such as a priming event) is not dispatched; the type defaults to
    ``message``. An event that is not ended by a blank line before the stream ends
    is discarded, as browsers and the MCP SDKs do.
    """
    return parse_sse_rest(text)[0]


def parse_sse_rest(text: str) -> tuple[list[tuple[str, str]], str | None]:
    """:func:`parse_sse`, plus the data of a trailing unterminated event (or None)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    events: list[tuple[str, str]] = []
    data: list[str] = []
    event_type = ""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # the "" after a final line end is not a blank line
    for line in lines:
        if not line:
            joined = "\n".join(data)
            if joined:
                events.append((event_type or "message", joined))
            data = []
            event_type = ""
            continue
        if line[0] == ":":
            continue
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        # "id" and "retry" are about reconnecting; this client reads one reply.
    pending = "\n".join(data)
    return events, (pending or None)


def id_matches(message: Mapping[str, Any], request_id: int) -> bool:
    """Whether ``message`` answers ``request_id`` (an error with id null answers any)."""
    mid = message.get("id")
    return (type(mid) is int and mid == request_id) or (mid is None and "error" in message)


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """The header ``name`` (given in lower case) of ``headers``, whatever their case."""
    value = headers.get(name)
    if value is None:
        for key, val in headers.items():
            if key.lower() == name:
                return val
    return value


class AnswerReader:
    """Reads answers for one client: ``mask`` hides its secrets in every message,
    ``where`` names its endpoint (masked) in HTTP errors."""

    def __init__(self, mask: Callable[[str], str], where: Callable[[], str]) -> None:
        self._mask = mask
        self._where = where

    def status_error(self, reply: Response) -> HttpStatusError:
        """The :class:`HttpStatusError` a non-2xx ``reply`` is (body masked)."""
        return HttpStatusError(
            reply.status,
            reply.headers,
            reply.body,
            url=self._where(),
            body_text=self._mask(reply.body.decode("utf-8", "replace")),
        )

    def result(self, reply: Response, request_id: int) -> Any:
        """The ``result`` of the response to ``request_id`` that ``reply`` carries.

        Raises:
            HttpStatusError: the status is not 2xx.
            JsonRpcError: the response is an error object.
            ProtocolViolation: the reply is no well-formed response to the request.
        """
        status = reply.status
        if status < 200 or status > 299:
            raise self.status_error(reply)
        ctype = reply.headers.get("content-type")
        if ctype != "application/json":  # the common case needs no normalising
            ctype = (header_value(reply.headers, "content-type") or "").partition(";")[0]
            ctype = ctype.strip().lower()
        if ctype == "application/json":
            message = self.decode_json(reply.body, "response body")
            if not isinstance(message, dict):
                raise ProtocolViolation(
                    f"response to request {request_id} is a JSON {type(message).__name__}, "
                    "not a JSON-RPC response object"
                )
            if not id_matches(message, request_id):
                raise ProtocolViolation(
                    f"response id {self._mask(repr(message.get('id')))} does not match "
                    f"request id {request_id}"
                )
            return self._unwrap(message, request_id)
        if ctype == "text/event-stream":
            return self._unwrap(self._find_in_stream(reply.body, request_id), request_id)
        if status == 202:
            raise ProtocolViolation(
                f"request {request_id} was answered 202 Accepted with no response; "
                "only notifications may be"
            )
        raise ProtocolViolation(
            f"response to request {request_id} has Content-Type {ctype or '(none)'!r}; "
            "expected application/json or text/event-stream"
        )

    def decode_json(self, data: bytes | str, what: str) -> Any:
        """``data`` as JSON; a :class:`ProtocolViolation` naming ``what`` when it is not."""
        try:
            return _fast_loads(data, _lenient)
        except ValueError as exc:  # UnicodeDecodeError included
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            snippet = self._mask(text[:120])
            raise ProtocolViolation(f"{what} is not valid JSON ({exc}): {snippet!r}") from None

    def _find_in_stream(self, body: bytes, request_id: int) -> dict[str, Any]:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolViolation("event stream is not valid UTF-8") from None
        events, pending = parse_sse_rest(text)
        seen: list[str] = []
        for event_type, data in events:
            if event_type != "message":
                seen.append(f"event {event_type!r}")
                continue
            message = self.decode_json(data, "event-stream data")
            if not isinstance(message, dict):
                raise ProtocolViolation(
                    f"event-stream data is a JSON {type(message).__name__}, not a JSON-RPC message"
                )
            is_response = "result" in message or "error" in message
            if is_response and id_matches(message, request_id):
                return message
            if is_response:
                seen.append(f"response to id {self._mask(repr(message.get('id')))}")
            else:
                seen.append(repr(message.get("method", "?")))
        hint = ""
        if pending is not None:
            hint = "; its last event is not ended by a blank line, so it does not count"
        got = ", ".join(seen) if seen else "no JSON-RPC messages"
        raise ProtocolViolation(
            f"event stream ended without the response to request {request_id}; "
            f"it carried {got}{hint}"
        )

    def _unwrap(self, message: dict[str, Any], request_id: int) -> Any:
        if message.get("jsonrpc") != "2.0":
            raise ProtocolViolation(f'response to request {request_id} lacks "jsonrpc": "2.0"')
        has_result = "result" in message
        if "error" in message:
            if has_result:
                raise ProtocolViolation(
                    f"response to request {request_id} has both result and error"
                )
            error = message["error"]
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            if not isinstance(code, int) or isinstance(code, bool) or not isinstance(text, str):
                raise ProtocolViolation(
                    f"response to request {request_id} has a malformed error object "
                    "(needs integer code and string message)"
                )
            raise JsonRpcError(code, self._mask(text), error.get("data"))
        if not has_result:
            raise ProtocolViolation(
                f"response to request {request_id} has neither result nor error"
            )
        return message["result"]
