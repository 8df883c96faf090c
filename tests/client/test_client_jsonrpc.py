"""The one reply reader: the answer to a request in a JSON body or an event stream.

``read_answer`` (what every reader of the kit uses) and ``AnswerWatch`` (where a
transport stops reading) agree on every stream form a server may write, and the watch
stops at the earliest byte that completes the answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_osfoundry.client import Answer, ProtocolViolation, read_answer
from pytest_osfoundry.client._jsonrpc import AnswerWatch, id_matches
from pytest_osfoundry.http import Response, json_response
from tests.conformance.variants_protocol import frame_every_form

ANSWER = {"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": "a", "n": [1, 2]}], "t": "x\ny"}}
STREAM = {"content-type": "text/event-stream; charset=utf-8"}


def _stream(text: str) -> Response:
    return Response(200, STREAM, text.encode())


def test_every_form_of_a_stream_reads_to_its_answer() -> None:
    body = frame_every_form(json.dumps(ANSWER).encode(), 9)
    answer = read_answer(Response(200, STREAM, body), 4)
    assert answer.message == ANSWER
    assert json.loads(answer.raw) == ANSWER and b"\r" not in answer.raw


def test_the_watch_stops_at_the_first_byte_that_completes_the_answer() -> None:
    body = frame_every_form(json.dumps(ANSWER).encode(), 9)
    watch = AnswerWatch(4)
    stop = next(i for i in range(len(body)) if watch.feed(body[i : i + 1]))
    assert read_answer(Response(200, STREAM, body[: stop + 1]), 4).message == ANSWER
    with pytest.raises(ProtocolViolation, match="not ended by a blank line"):
        read_answer(Response(200, STREAM, body[:stop]), 4)


@pytest.mark.parametrize(
    ("request_id", "stream", "expected"),
    [
        # the priming event, another event type, a notification and another id come first
        (
            4,
            'id: p\ndata:\n\nevent: other\ndata: {"id":4,"result":1}\n\n'
            'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'
            'data: {"jsonrpc":"2.0","id":3,"result":0}\n\n'
            'data: {"jsonrpc":"2.0","id":4,"result":2}\n\n',
            {"jsonrpc": "2.0", "id": 4, "result": 2},
        ),
        (4, 'data: {"id":"4","result":0}\n\ndata: {"id":4,"result":1}\n\n', {"id": 4, "result": 1}),
        # a byte order mark before the first field (the watch once read "\ufeffdata")
        (4, '\ufeffdata: {"id":4,"result":1}\n\n', {"id": 4, "result": 1}),
        (
            "a",
            'data: {"id":4,"result":0}\n\ndata: {"id":"a","result":1}\n\n',
            {"id": "a", "result": 1},
        ),
        (4, 'data: {"id":null,"error":{"code":-1}}\n\n', {"id": None, "error": {"code": -1}}),
        (None, 'data: {"method":"m"}\n\ndata: {"id":7,"result":1}\n\n', {"id": 7, "result": 1}),
    ],
)
def test_a_stream_is_searched_for_the_response_to_the_request(
    request_id: int | str | None, stream: str, expected: dict[str, Any]
) -> None:
    assert read_answer(_stream(stream), request_id).message == expected
    if request_id is not None:
        watch = AnswerWatch(request_id)
        assert watch.feed(stream.encode()) is True


def test_a_json_body_is_the_answer_whatever_its_id_and_status() -> None:
    reply = json_response(400, {"jsonrpc": "2.0", "id": 99, "error": {"code": -32020}})
    assert read_answer(reply, 4) == Answer(json.loads(reply.body), reply.body)


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (_stream('data: {"id":4,"result":1}\n'), "without the response to request 4.*blank line"),
        (_stream("data: [1]\n\n"), "JSON list, not a JSON-RPC message"),
        (_stream("data: {nope\n\n"), "event-stream data is not valid JSON"),
        (_stream('event: x\ndata: {"id":4}\n\n'), "it carried event 'x'"),
        (Response(200, {"content-type": "text/html"}, b"<p>"), "Content-Type 'text/html'"),
        (Response(202), "202 Accepted with no response"),
        (json_response(200, [1]), "JSON list, not a JSON-RPC response object"),
    ],
)
def test_what_holds_no_answer_is_a_violation_naming_why(reply: Response, match: str) -> None:
    with pytest.raises(ProtocolViolation, match=match):
        read_answer(reply, 4)


def test_a_watch_passes_over_what_is_not_its_answer() -> None:
    watch = AnswerWatch(4)
    assert not watch.feed(b'data: {nope\n\ndata: {"id":4}\n\ndata: {"id":true,"result":1}\n\n')
    assert watch.feed(b'data: {"id":4,"error":{}}\n\n')


@pytest.mark.parametrize(
    ("message", "request_id", "matches"),
    [
        ({"id": 4}, 4, True),
        ({"id": "4"}, 4, False),
        ({"id": True}, 1, False),
        ({"id": 1.0}, 1, False),
        ({"id": None, "error": {}}, 4, True),
        ({"id": None, "result": {}}, 4, False),
        ({"error": {}}, "a", True),
    ],
)
def test_ids_match_by_value_and_json_type(
    message: dict[str, Any], request_id: int | str, matches: bool
) -> None:
    assert id_matches(message, request_id) is matches
