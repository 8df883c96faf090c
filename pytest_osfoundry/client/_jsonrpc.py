"""The JSON-RPC envelope of MCP's Streamable HTTP: the one writer of a request and the
one reader of a reply.

Every JSON-RPC message the kit sends is written by :func:`request_body` (through
:mod:`pytest_osfoundry._wirejson`) and asks for its answer with :data:`ACCEPT`.

A request is answered with ``application/json`` or with a ``text/event-stream``
(decoded by :mod:`pytest_osfoundry._sse`, as the SSE format says). Every part of the
kit that reads an answer reads it here:

* :func:`read_answer` finds, in a whole reply of any status, the JSON-RPC message
  answering one request (the JSON body; in a stream, the first ``message`` event
  whose data is a response with the request's id) and its exact bytes, or raises
  :class:`~pytest_osfoundry.client._errors.ProtocolViolation` saying what is wrong.
  The conformance suite reads every reply with it (catching the violation when it
  judges the answer itself).
* :class:`AnswerReader` is the client's strict use of it: a non-2xx status raises
  :class:`~pytest_osfoundry.client._errors.HttpStatusError`, an error object
  :class:`~pytest_osfoundry.client._errors.JsonRpcError`, anything the protocol does
  not allow :class:`ProtocolViolation` (the conformance suite judges servers with it,
  so nothing is guessed around). Every text taken from the answer is masked before it
  reaches a message.
* :class:`AnswerWatch` is the same search fed a stream as it arrives: it says when the
  answer is complete, so a transport can stop reading there (SPEC R1: a server may
  leave the stream open). :func:`answer_end` is what the transport is given: from a
  request's body, the watch of its answer (the transport itself reads bytes only).

In a stream, events of a type other than ``message``, and events with empty data
(such as MCP's priming event), carry no message; a JSON-RPC request or notification
sent before the answer is passed over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pytest_osfoundry._sse import Event, EventStreamDecoder
from pytest_osfoundry._wirejson import dumps as _dumps
from pytest_osfoundry._wirejson import loads as _fast_loads
from pytest_osfoundry.client._errors import HttpStatusError, JsonRpcError, ProtocolViolation
from pytest_osfoundry.http import Response

__all__ = [
    "ACCEPT",
    "Answer",
    "AnswerReader",
    "AnswerWatch",
    "RequestId",
    "answer_end",
    "content_type",
    "header_value",
    "id_matches",
    "id_of_request",
    "read_answer",
    "request_body",
    "request_id_of",
]

RequestId = int | str
"""A JSON-RPC request id as the kit sends them (never null, never a bool)."""

ACCEPT = "application/json, text/event-stream"
"""The ``Accept`` value of every MCP request the kit sends: an answer may come as JSON or
as an event stream, and Streamable HTTP asks the client to accept both."""

_loads = json.JSONDecoder().decode  # str only: JSON on the wire is UTF-8 (RFC 8259)


def _lenient(data: bytes | str) -> Any:
    """The standard library's reading of a reply (UTF-8 only; ``NaN`` tolerated)."""
    return _loads(data.decode("utf-8") if isinstance(data, bytes) else data)


def _unmasked(text: str) -> str:
    return text


def id_matches(message: Mapping[str, Any], request_id: RequestId) -> bool:
    """Whether ``message`` answers ``request_id``: the same id of the same JSON type
    (``1`` is not ``"1"``, ``true`` is not ``1``), or an error with id null, which
    answers any (JSON-RPC 2.0, section 5)."""
    mid = message.get("id")
    if mid is None:
        return "error" in message
    return type(mid) is type(request_id) and mid == request_id


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """The header ``name`` (given in lower case) of ``headers``, whatever their case."""
    value = headers.get(name)
    if value is None:
        for key, val in headers.items():
            if key.lower() == name:
                return val
    return value


def content_type(headers: Mapping[str, str]) -> str:
    """The media type of ``headers``' ``Content-Type``, lower-cased, parameters dropped
    (``""`` when there is none)."""
    value = headers.get("content-type")
    if value == "application/json":  # the common case needs no normalising
        return value
    value = header_value(headers, "content-type") or ""
    return value.partition(";")[0].strip().lower()


def request_body(
    method: str, params: Mapping[str, Any] | None = None, request_id: RequestId | None = None
) -> bytes:
    """One JSON-RPC 2.0 message as the kit sends it, as compact UTF-8 JSON: a request
    when ``request_id`` is given, else a notification; no ``params`` member when
    ``params`` is ``None``. Members in the order ``jsonrpc``, ``id``, ``method``,
    ``params``."""
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["method"] = method
    if params is not None:  # serialized right away: no copy needed for a dict
        message["params"] = params if type(params) is dict else dict(params)
    return _dumps(message)


def request_id_of(body: bytes) -> RequestId | None:
    """The JSON-RPC id of a request body, or ``None`` (a notification, a batch, not JSON)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return id_of_request(message)


def id_of_request(message: object) -> RequestId | None:
    """The JSON-RPC id of a decoded request message, or ``None`` (a notification, or
    not a request object)."""
    if not isinstance(message, dict) or "method" not in message:
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    return rid


def decode_json(data: bytes | str, what: str, mask: Callable[[str], str] = _unmasked) -> Any:
    """``data`` as JSON; a :class:`ProtocolViolation` naming ``what`` (its start shown,
    masked by ``mask``) when it is not."""
    try:
        return _fast_loads(data, _lenient)
    except ValueError as exc:  # UnicodeDecodeError included
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        raise ProtocolViolation(f"{what} is not valid JSON ({exc}): {mask(text[:120])!r}") from None


class Answer(NamedTuple):
    """The JSON-RPC message a reply carries and its exact bytes (the body, or the
    event's data as UTF-8)."""

    message: dict[str, Any]
    raw: bytes


def _request(request_id: RequestId | None) -> str:
    return "the request" if request_id is None else f"request {request_id!r}"


def _message_of(event: Event, mask: Callable[[str], str]) -> dict[str, Any] | None:
    """The JSON-RPC message an event carries (``None``: it carries none)."""
    if event.type != "message" or not event.data:
        return None
    message = decode_json(event.data, "event-stream data", mask)
    if not isinstance(message, dict):
        raise ProtocolViolation(
            f"event-stream data is a JSON {type(message).__name__}, not a JSON-RPC message"
        )
    return message


def _answers(message: Mapping[str, Any], request_id: RequestId | None) -> bool:
    """Whether ``message`` is a response answering ``request_id`` (``None``: any)."""
    if "result" not in message and "error" not in message:
        return False
    return request_id is None or id_matches(message, request_id)


def _from_stream(body: bytes, request_id: RequestId | None, mask: Callable[[str], str]) -> Answer:
    decoder = EventStreamDecoder()
    events = decoder.feed(body)
    unterminated = decoder.close()
    seen: list[str] = []
    for event in events:
        if event.type != "message":
            seen.append(f"event {mask(event.type)!r}")
            continue
        message = _message_of(event, mask)
        if message is None:
            continue
        if _answers(message, request_id):
            return Answer(message, event.data.encode("utf-8"))
        if "result" in message or "error" in message:
            seen.append(f"response to id {mask(repr(message.get('id')))}")
        else:
            seen.append(mask(repr(message.get("method", "?"))))
    hint = ""
    if unterminated:
        hint = "; its last event is not ended by a blank line, so it does not count"
    got = ", ".join(seen) if seen else "no JSON-RPC messages"
    raise ProtocolViolation(
        f"event stream ended without the response to {_request(request_id)}; it carried {got}{hint}"
    )


def read_answer(
    reply: Response, request_id: RequestId | None, mask: Callable[[str], str] = _unmasked
) -> Answer:
    """The JSON-RPC message ``reply`` (any status) carries in answer to ``request_id``.

    A JSON body is the answer whatever its id (judging the id is the caller's); in an
    event stream it is the first ``message`` event whose data is a response to
    ``request_id`` (``None``: to any request). ``mask`` hides secrets in the messages.

    Raises:
        ProtocolViolation: the reply is neither JSON nor an event stream, its JSON
            (body or event data) is invalid or not an object, or the stream ended
            without the answer (an event not ended by a blank line does not count).
    """
    ctype = content_type(reply.headers)
    if ctype == "application/json":
        message = decode_json(reply.body, "response body", mask)
        if not isinstance(message, dict):
            raise ProtocolViolation(
                f"response to {_request(request_id)} is a JSON {type(message).__name__}, "
                "not a JSON-RPC response object"
            )
        return Answer(message, reply.body)
    if ctype == "text/event-stream":
        return _from_stream(reply.body, request_id, mask)
    if reply.status == 202:
        raise ProtocolViolation(
            f"{_request(request_id)} was answered 202 Accepted with no response; "
            "only notifications may be"
        )
    raise ProtocolViolation(
        f"response to {_request(request_id)} has Content-Type {ctype or '(none)'!r}; "
        "expected application/json or text/event-stream"
    )


class AnswerWatch:
    """Spots, piece by piece, the end of the event carrying the answer to one request.

    :meth:`feed` returns True once a complete ``message`` event has arrived whose data
    is a JSON-RPC response (``result`` or ``error``) answering ``request_id`` (the same
    rule as :func:`read_answer`). The stream is decoded by one
    :class:`~pytest_osfoundry._sse.EventStreamDecoder`, so a stream of any length
    costs no more memory than its longest event. An event whose data is no JSON-RPC
    message is passed over here; :func:`read_answer` names it once the reading stops.
    """

    __slots__ = ("_decoder", "request_id")

    def __init__(self, request_id: RequestId) -> None:
        self.request_id = request_id
        self._decoder = EventStreamDecoder()

    def feed(self, chunk: bytes) -> bool:
        """Take the next bytes of the stream; True once the answer is complete."""
        for event in self._decoder.feed(chunk):
            try:
                message = _message_of(event, _unmasked)
            except ProtocolViolation:
                continue
            if message is not None and _answers(message, self.request_id):
                return True
        return False


def answer_end(request: bytes) -> Callable[[bytes], bool] | None:
    """Where the event stream answering the request whose body is ``request`` ends: a
    function fed the stream's bytes as they arrive, True once the answer to the
    request's id is complete (:class:`AnswerWatch`); ``None`` when the body is no
    JSON-RPC request (empty, a notification, a batch), so nothing on the stream answers
    it."""
    request_id = request_id_of(request) if request else None
    return None if request_id is None else AnswerWatch(request_id).feed


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
        message = read_answer(reply, request_id, self._mask).message
        if not id_matches(message, request_id):
            raise ProtocolViolation(
                f"response id {self._mask(repr(message.get('id')))} does not match "
                f"request id {request_id}"
            )
        return self._unwrap(message, request_id)

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
