"""Judging: how a check fails, what it notes when it passes, and the usual comparisons.

Every failure is a :class:`CheckFailure` whose message names what was expected and
what came back, with every credential masked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry.client import ToolReply, mask_token
from pytest_osfoundry.conformance.expected import INVALID_PARAMS

__all__ = ["CheckFailure", "Expect", "is_utc_timestamp", "short"]


class CheckFailure(AssertionError):
    """A check found the target differing from conformance/spec.md; the message says how."""


def is_utc_timestamp(value: object) -> bool:
    """True for an RFC 3339 timestamp in UTC (``Z`` or ``+00:00``)."""
    parsed = parse_rfc3339(value)
    offset = None if parsed is None else parsed.utcoffset()
    return offset is not None and offset.total_seconds() == 0


def short(value: Any, limit: int = 300) -> str:
    """``repr(value)`` cut to ``limit`` characters, for failure messages."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class Expect:
    """A check's judge: ``c.expect(condition, message)`` and the named comparisons.

    ``secrets`` are masked in every failure message, on top of whatever is passed.
    """

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = list(secrets)
        self.notes: list[str] = []
        """What a passing check adds to its one-line message (e.g. which shape it saw)."""

    def mask(self, text: str) -> str:
        """``text`` with every credential masked."""
        return mask_token(text, self._secrets)

    def fail(self, message: str) -> NoReturn:
        """Fail the check with ``message`` (masked)."""
        __tracebackhide__ = True
        raise CheckFailure(self.mask(message))

    def __call__(self, condition: object, message: str) -> None:
        """Fail the check with ``message`` unless ``condition`` holds."""
        __tracebackhide__ = True
        if not condition:
            self.fail(message)

    def note(self, text: str) -> None:
        """Add to the one-line message a passing check reports."""
        self.notes.append(text)

    def equal(self, actual: Any, expected: Any, what: str) -> None:
        """Fail unless ``actual == expected``, naming ``what`` and both values."""
        __tracebackhide__ = True
        if actual != expected:
            self.fail(f"{what}: expected {short(expected)}, got {short(actual)}")

    def result_of(self, reply: ToolReply, tool: str, what: str) -> dict[str, Any]:
        """The object of a successful answer; fail the check for any other answer."""
        __tracebackhide__ = True
        if reply.kind != "result":
            self.fail(f"{what}: {tool} answered {reply.describe()}")
        if reply.structured is None:
            self.fail(
                f"{what}: {tool} succeeded but its result carries no JSON object "
                "(neither structuredContent nor an object in content[0].text)"
            )
        return reply.structured

    def error(self, reply: ToolReply, message: str, what: str) -> None:
        """Fail unless ``reply`` is the domain error ``message`` (isError result or
        JSON-RPC error).

        The R3 shape (``isError``) is checked by its own check; here either form passes,
        and a JSON-RPC error is noted.
        """
        __tracebackhide__ = True
        if reply.kind == "tool_error" and reply.message == message:
            return
        if reply.kind == "rpc_error" and reply.message == message:
            self.note("the error came as a JSON-RPC error, not an isError result")
            return
        self.fail(f"{what}: expected the error {message!r}, got {reply.describe()}")

    def schema_refusal(self, reply: ToolReply, what: str) -> None:
        """Fail unless ``reply`` refuses a schema violation as R3 allows; note which form."""
        __tracebackhide__ = True
        if reply.kind == "tool_error":
            self.note(f"{what}: refused as an isError result")
            return
        if reply.kind in ("rpc_error", "http_error") and reply.code == INVALID_PARAMS:
            via = "" if reply.kind == "rpc_error" else f" (HTTP {reply.status})"
            self.note(f"{what}: refused as JSON-RPC error -32602{via}")
            return
        self.fail(
            f"{what}: expected an isError result or JSON-RPC error -32602, got {reply.describe()}"
        )
