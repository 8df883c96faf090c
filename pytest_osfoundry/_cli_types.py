"""argparse types for every command line of the kit, with one style of refusal.

``osfoundry-fake serve``, ``osfoundry-fake relay`` and ``osfoundry-sim`` take their
argument types from here. Each is a function from the text typed to the value, and
refuses with :class:`argparse.ArgumentTypeError` saying ``expected <what>, got
<the text>`` (argparse prefixes the option's name), so every bad argument reads
the same whichever command it was given to.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from pytest_osfoundry._vocabulary import MAX_SYNC_SESSIONS

__all__ = [
    "bounded_seconds",
    "mcp_path",
    "number",
    "port",
    "positive_int",
    "positive_seconds",
    "seconds_at_least",
    "session_count",
    "whole_at_least",
    "worker_count",
]

MAX_WORKERS = 1024
"""The most threads ``osfoundry-fake serve --workers`` starts."""

_T = TypeVar("_T")


def _refuse(what: str, text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"expected {what}, got {text!r}")


def _parsed(text: str, parse: Callable[[str], _T], what: str) -> _T:
    try:
        return parse(text)
    except ValueError:
        raise _refuse(what, text) from None


def number(text: str) -> float:
    """Any number (``1``, ``0.5``, ``1e3``)."""
    return _parsed(text, float, "a number")


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    value = _parsed(text, int, "a positive integer")
    if value < 1:
        raise _refuse("a positive integer", text)
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0."""
    what = "a positive number of seconds"
    value = _parsed(text, float, what)
    if not (value > 0 and math.isfinite(value)):
        raise _refuse(what, text)
    return value


def whole_at_least(low: int, why: str = "") -> Callable[[str], int]:
    """A type: a whole number of at least ``low`` (``why`` says why, in the refusal)."""
    what = f"a whole number of at least {low}" + (f" ({why})" if why else "")

    def whole(text: str) -> int:
        value = _parsed(text, int, what)
        if value < low:
            raise _refuse(what, text)
        return value

    whole.__name__ = "whole"
    return whole


def seconds_at_least(low: float, why: str = "") -> Callable[[str], float]:
    """A type: a finite number of seconds of at least ``low``."""
    what = f"a number of seconds of at least {low:g}" + (f" ({why})" if why else "")

    def seconds(text: str) -> float:
        value = _parsed(text, float, what)
        if not (math.isfinite(value) and value >= low):
            raise _refuse(what, text)
        return value

    seconds.__name__ = "seconds"
    return seconds


def bounded_seconds(high: float) -> Callable[[str], float]:
    """A type: a finite number of seconds from 0 to ``high``."""
    what = f"a number of seconds from 0 to {high:g}"

    def seconds(text: str) -> float:
        value = _parsed(text, float, what)
        if not (math.isfinite(value) and 0 <= value <= high):
            raise _refuse(what, text)
        return value

    seconds.__name__ = "seconds"
    return seconds


def _whole_in(text: str, low: int, high: int, what: str) -> int:
    """``text`` as a whole number from ``low`` to ``high``, refused naming ``what``."""
    value = _parsed(text, int, what)
    if not low <= value <= high:
        raise _refuse(what, text)
    return value


def session_count(text: str) -> int:
    """How many sessions a desktop shares: 0 to 100 (what one sync carries at most, D10)."""
    what = f"a whole number from 0 to {MAX_SYNC_SESSIONS} (what one sync carries at most)"
    return _whole_in(text, 0, MAX_SYNC_SESSIONS, what)


def worker_count(text: str) -> int:
    """How many threads answer requests: 1 to :data:`MAX_WORKERS`."""
    return _whole_in(text, 1, MAX_WORKERS, f"a whole number from 1 to {MAX_WORKERS}")


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    return _whole_in(text, 0, 65535, "a port number from 0 to 65535")


def mcp_path(text: str) -> str:
    """An absolute URL path (``/mcp``)."""
    if not text.startswith("/"):
        raise _refuse("a path starting with '/' (like /mcp)", text)
    return text
