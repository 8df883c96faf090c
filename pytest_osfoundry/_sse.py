"""The ``text/event-stream`` format, decoded as the WHATWG HTML standard says (server-sent
events, "Parsing an event stream" and "Interpreting an event stream").

:class:`EventStreamDecoder` is fed a stream's bytes as they arrive and returns the
events each piece completes, so a reader can stop at the event it waits for; it keeps
only the current line and the current event between pieces. :func:`decode_events`
decodes a whole body with it. What they promise, rule by rule:

* the bytes are UTF-8 (invalid sequences become U+FFFD, as the UTF-8 decode algorithm
  says), a character split between pieces included; one leading byte order mark is
  dropped;
* lines end in CRLF, LF or CR, in any mix, a CRLF split between pieces included;
* a line starting with ``:`` is a comment; ``name: value`` is a field, one space after
  the colon dropped only when present; a line without a colon is a field of that name
  with an empty value; unknown fields are ignored;
* ``data`` lines of one event are joined with LF; ``event`` sets its type (``message``
  when empty or absent); ``id`` sets the last event id, which events keep until the
  next ``id`` (a value containing U+0000 is ignored); ``retry`` of ASCII digits only
  sets :attr:`EventStreamDecoder.retry`;
* a blank line dispatches the event; an event with no ``data`` line is not dispatched
  (one whose only ``data`` line is empty is, with empty data, as a browser does: it is
  the reader's business to skip it, e.g. MCP's priming event);
* an event not ended by a blank line when the stream ends is not dispatched
  (:meth:`EventStreamDecoder.close` says whether one was left).

Nothing here knows JSON or JSON-RPC: :mod:`pytest_osfoundry.client._jsonrpc` reads
MCP's answers on top of it.
"""

from __future__ import annotations

import codecs
import re
from typing import NamedTuple

__all__ = ["Event", "EventStreamDecoder", "decode_events"]

_LINE_END = re.compile(r"\r\n|\r|\n")
_DIGITS = re.compile(r"[0-9]+")


class Event(NamedTuple):
    """One dispatched event: its ``data`` (``data`` lines joined with LF), its ``type``
    and the stream's last event ``id`` when it was dispatched."""

    data: str
    type: str = "message"
    id: str = ""


class EventStreamDecoder:
    """Decodes one event stream, piece by piece (see the module's rules).

    :meth:`feed` takes the next bytes and returns the events they completed;
    :meth:`close` ends the stream. :attr:`last_event_id` and :attr:`retry` are the
    stream's state so far (``retry``: the reconnection time in milliseconds the
    server asked for, ``None`` if it did not).
    """

    __slots__ = ("_after_cr", "_data", "_line", "_text", "_type", "last_event_id", "retry")

    def __init__(self) -> None:
        # utf-8-sig: UTF-8 that drops one leading byte order mark, even split between pieces
        self._text = codecs.getincrementaldecoder("utf-8-sig")("replace")
        self._after_cr = False
        self._line: list[str] = []  # the pieces of a line not ended yet
        self._data: list[str] = []  # the current event's data lines (one per line)
        self._type = ""
        self.last_event_id = ""
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[Event]:
        """Take the next bytes of the stream; the events they complete, in order."""
        return self._lines(self._text.decode(chunk))

    def close(self) -> bool:
        """End the stream: whatever event was not ended by a blank line is dropped.

        Returns whether such an event (a partial line, or fields of an event not yet
        dispatched) was left.
        """
        tail = self._text.decode(b"", final=True)
        if tail:
            self._lines(tail)
        left = bool(self._line or self._data or self._type)
        self._line, self._data, self._type = [], [], ""
        return left

    def _lines(self, text: str) -> list[Event]:
        if not text:
            return []
        if self._after_cr:
            self._after_cr = False
            if text[0] == "\n":  # the LF of a CRLF split between pieces
                text = text[1:]
                if not text:
                    return []
        events: list[Event] = []
        start = 0
        for end in _LINE_END.finditer(text):
            line = text[start : end.start()]
            if self._line:
                self._line.append(line)
                line, self._line = "".join(self._line), []
            event = self._field(line)
            if event is not None:
                events.append(event)
            start = end.end()
        if start < len(text):
            self._line.append(text[start:])
        elif text[-1] == "\r":
            self._after_cr = True
        return events

    def _field(self, line: str) -> Event | None:
        """Process one line; the event it dispatches, if any."""
        if not line:
            if not self._data:  # no data line: nothing to dispatch
                self._type = ""
                return None
            event = Event("\n".join(self._data), self._type or "message", self.last_event_id)
            self._data, self._type = [], ""
            return event
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif name == "retry" and _DIGITS.fullmatch(value):
            self.retry = int(value)
        return None


def decode_events(body: bytes) -> tuple[list[Event], bool]:
    """The events of a whole ``text/event-stream`` body, and whether an event was left
    unterminated at its end (not dispatched)."""
    decoder = EventStreamDecoder()
    events = decoder.feed(body)
    return events, decoder.close()
