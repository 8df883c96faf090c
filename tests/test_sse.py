"""The event-stream decoder against the WHATWG rules, form by form, and any stream a
server may write decoding back to the events it meant.

Every table row feeds the stream whole, then one byte at a time: the decoder must not
care where a stream is cut (a CRLF, a UTF-8 character or a line split between pieces).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry._sse import Event, EventStreamDecoder, decode_events


def _bytewise(stream: bytes) -> tuple[list[Event], bool]:
    decoder = EventStreamDecoder()
    events = [event for i in range(len(stream)) for event in decoder.feed(stream[i : i + 1])]
    return events, decoder.close()


M = "message"

CASES: list[tuple[str, bytes, list[Event]]] = [
    ("LF", b"data: a\n\n", [Event("a")]),
    ("CRLF", b"data: a\r\n\r\n", [Event("a")]),
    ("CR", b"data: a\r\r", [Event("a")]),
    ("mixed line ends", b"data: a\rdata: b\r\n\ndata: c\n\r", [Event("a\nb"), Event("c")]),
    ("CR then LF is one line end", b"data: a\r\ndata: b\r\n\r\n", [Event("a\nb")]),
    ("LF then CR is two", b"data: a\n\rdata: b\n\n", [Event("a"), Event("b")]),
    ("a leading BOM is dropped", b"\xef\xbb\xbfdata: a\n\n", [Event("a")]),
    ("only one BOM is dropped", b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n", [Event("b")]),
    ("a BOM later is data", b"data: \xef\xbb\xbfa\n\n", [Event("\ufeffa")]),
    ("comments", b": hi\n:\ndata: a\n: mid\n\n", [Event("a")]),
    ("one space dropped", b"data:  a \n\n", [Event(" a ")]),
    ("no space needed", b"data:a\n\n", [Event("a")]),
    ("a tab is kept", b"data:\ta\n\n", [Event("\ta")]),
    ("only the first colon splits", b"data: a: b:c\n\n", [Event("a: b:c")]),
    ("data lines joined with LF", b'data: {\ndata:  "k": 1\ndata:}\n\n', [Event('{\n "k": 1\n}')]),
    ("field with no colon", b"data\ndata\n\n", [Event("\n")]),
    ("one empty data line is empty data", b"id: 7\ndata:\n\n", [Event("", M, "7")]),
    ("no data line: not dispatched", b"id: 7\n\nevent: x\n\ndata: a\n\n", [Event("a", M, "7")]),
    ("event type", b"event: ping\ndata: a\n\n", [Event("a", "ping")]),
    ("event type reset", b"event: ping\ndata: a\n\ndata: b\n\n", [Event("a", "ping"), Event("b")]),
    (
        "empty event type is message",
        b"event:\ndata: a\n\nevent\ndata: b\n\n",
        [Event("a"), Event("b")],
    ),
    (
        "the last event id stays",
        b"id: 1\ndata: a\n\ndata: b\n\n",
        [Event("a", M, "1"), Event("b", M, "1")],
    ),
    (
        "an empty id resets it",
        b"id: 1\ndata: a\n\nid\ndata: b\n\n",
        [Event("a", M, "1"), Event("b")],
    ),
    (
        "an id with NUL is ignored",
        b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n",
        [Event("a", M, "1"), Event("b", M, "1")],
    ),
    ("field names are exact", b"Data: a\ndata : b\n data: c\ndata: d\n\n", [Event("d")]),
    ("unknown fields are ignored", b"x: 1\nretry: 10\ndata: a\n\n", [Event("a")]),
    ("several blank lines", b"\n\n\ndata: a\n\n\n\n", [Event("a")]),
    ("an unterminated event is dropped", b"data: a\n\ndata: b\n", [Event("a")]),
    ("a partial line is dropped", b"data: a\n\ndata: b", [Event("a")]),
    ("invalid UTF-8 is replaced", b"data: a\xff\xe2\x82b\n\n", [Event("a\ufffd\ufffdb")]),
    ("multi-byte characters", "data: 日本 😀\n\n".encode(), [Event("日本 😀")]),
]


@pytest.mark.parametrize(("stream", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_form_decodes_as_the_sse_format_says(stream: bytes, expected: list[Event]) -> None:
    assert decode_events(stream)[0] == expected
    assert _bytewise(stream)[0] == expected


@pytest.mark.parametrize(
    ("stream", "left"),
    [
        (b"data: a\n\n", False),
        (b"", False),
        (b": comment\n", False),
        (b"data: a\n", True),
        (b"data: a\n\ndata: b", True),
        (b"event: x\n", True),
        (b"data: a\n\n\xe2\x82", True),
    ],
)
def test_close_says_whether_an_event_was_left_unterminated(stream: bytes, left: bool) -> None:
    assert decode_events(stream)[1] is left
    assert _bytewise(stream)[1] is left


def test_retry_takes_ascii_digits_only() -> None:
    decoder = EventStreamDecoder()
    decoder.feed(b"retry: 250\n\nretry: 1x\nretry: -3\nretry:\n\n")
    assert decoder.retry == 250
    decoder.feed(b"retry: 40\n")
    assert decoder.retry == 40


def test_feed_returns_each_event_when_its_blank_line_arrives() -> None:
    decoder = EventStreamDecoder()
    assert decoder.feed(b"data: a\n") == []
    assert decoder.feed(b"\r") == [Event("a")]  # a CR alone ends the event at once
    assert decoder.feed(b"\ndata: b\r\n") == []  # that CR's LF is not a second blank line
    assert decoder.feed(b"\r\ndata: c\n\n") == [Event("b"), Event("c")]


# ---------------------------------------------------------------------- any stream
@dataclass(frozen=True)
class Sent:
    """One event as a server means it: its data, and the type and id it sets."""

    data: str
    type: str | None
    id: str | None


_LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"))
_ID = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"))
_EVENTS = st.lists(
    st.builds(
        Sent,
        data=st.lists(_LINE, min_size=1, max_size=4).map("\n".join),
        type=st.none() | _LINE,
        id=st.none() | _ID,
    ),
    max_size=6,
)


@st.composite
def _written(draw: st.DrawFn, events: list[Sent]) -> bytes:
    """``events`` written as a server may write them: any line ends, with or without the
    space after a colon (where that keeps the value), comments, unknown fields, retry,
    fields in any order before the data, a byte order mark, a blank line or more."""
    lines: list[str] = []

    def field(name: str, value: str) -> str:
        if value == "" and draw(st.booleans()):
            return name  # no colon: the field with an empty value
        spaced = value.startswith(" ") or draw(st.booleans())
        return f"{name}: {value}" if spaced else f"{name}:{value}"

    for sent in events:
        head: list[str] = []
        if sent.type is not None:
            head.append(field("event", sent.type))
        if sent.id is not None:
            head.append(field("id", sent.id))
        if draw(st.booleans()):
            head.append(": " + draw(_LINE))
        if draw(st.booleans()):
            head.append(draw(st.sampled_from(["retry: 100", "x-vendor: 1", "retry: no"])))
        lines += draw(st.permutations(head))
        lines += [field("data", part) for part in sent.data.split("\n")]
        lines += [""] * draw(st.integers(1, 2))
    text = ""
    for line in lines:
        end = draw(st.sampled_from(["\n", "\r", "\r\n"]))
        if not line and end == "\n" and text.endswith("\r"):
            end = "\r\n"  # CR then LF would be one line end, not a blank line
        text += line + end
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode()


def _meant(events: list[Sent]) -> list[Event]:
    out: list[Event] = []
    last_id = ""
    for sent in events:
        last_id = sent.id if sent.id is not None else last_id
        out.append(Event(sent.data, sent.type or "message", last_id))
    return out


@settings(max_examples=100, deadline=None)
@given(data=st.data(), events=_EVENTS)
def test_any_stream_a_server_may_write_decodes_back_whatever_its_pieces(
    data: st.DataObject, events: list[Sent]
) -> None:
    stream = data.draw(_written(events))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    decoder = EventStreamDecoder()
    got: list[Event] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += decoder.feed(stream[start:end])
    assert not decoder.close()
    assert got == _meant(events)
    assert decode_events(stream) == (got, False)
