"""Poll strategies: when an agent calls ``get_graph_run`` next.

A strategy is any callable ``(attempt, elapsed) -> seconds``: ``attempt`` counts the
polls made so far (0 before the first), ``elapsed`` the seconds since the run was
queued; it returns how long to wait before the next poll. The six strategies of the
seed's table (conformance/spec.md#figures) are built in, under the names the table uses::

    every(2), every(5), every(15), every(30), backoff(2, cap=30), wait_then_every(20, 10)

:func:`parse_strategy` turns a spelled-out name (``"every 5 s"``, ``"backoff 2, 4,
8 … 30 s"``, ``"wait 20 s, then every 10 s"``) or ``module:function`` into a strategy.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from pytest_osfoundry._checks import check_number, check_seconds

__all__ = [
    "SEED_STRATEGIES",
    "Strategy",
    "backoff",
    "every",
    "parse_strategy",
    "wait_then_every",
]

Strategy = Callable[[int, float], float]


def _fmt(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class every:
    """Poll every ``seconds``, the first poll ``seconds`` after queueing."""

    seconds: float

    def __post_init__(self) -> None:
        check_seconds(self.seconds, "every(seconds)", positive=True)

    def __call__(self, attempt: int, elapsed: float) -> float:
        return self.seconds

    @property
    def name(self) -> str:
        """The strategy as the seed's table names it (``every 5 s``)."""
        return f"every {_fmt(self.seconds)} s"


@dataclass(frozen=True)
class backoff:
    """Exponential backoff: wait ``first``, then ``first * factor**k``, capped at ``cap``."""

    first: float = 2.0
    cap: float = 30.0
    factor: float = 2.0

    def __post_init__(self) -> None:
        check_seconds(self.first, "backoff(first)", positive=True)
        check_seconds(self.cap, "backoff(cap)", positive=True)
        check_number(self.factor, "backoff(factor)", low=1)
        if self.cap < self.first:
            raise ValueError(f"backoff(cap={self.cap}) is below first={self.first}")

    def __call__(self, attempt: int, elapsed: float) -> float:
        return float(min(self.cap, self.first * self.factor ** min(attempt, 64)))

    @property
    def name(self) -> str:
        """``backoff 2, 4, 8 … 30 s`` for the seed's parameters."""
        a, f = self.first, self.factor
        return f"backoff {_fmt(a)}, {_fmt(a * f)}, {_fmt(a * f * f)} … {_fmt(self.cap)} s"


@dataclass(frozen=True)
class wait_then_every:
    """Wait ``first`` seconds (about one pickup interval), then poll every ``then``."""

    first: float = 20.0
    then: float = 10.0

    def __post_init__(self) -> None:
        check_seconds(self.first, "wait_then_every(first)", positive=True)
        check_seconds(self.then, "wait_then_every(then)", positive=True)

    def __call__(self, attempt: int, elapsed: float) -> float:
        return self.first if attempt == 0 else self.then

    @property
    def name(self) -> str:
        """``wait 20 s, then every 10 s``."""
        return f"wait {_fmt(self.first)} s, then every {_fmt(self.then)} s"


#: The six rows of the seed's polling table, in its order.
SEED_STRATEGIES: tuple[every | backoff | wait_then_every, ...] = (
    every(2),
    every(5),
    every(15),
    every(30),
    backoff(2, cap=30),
    wait_then_every(20, 10),
)

_N = r"(?:\d+(?:\.\d+)?|\.\d+)"  # a plain decimal number
_NUM = rf"({_N})"
_EVERY = re.compile(rf"every\s+{_NUM}\s*s?")
_WAIT = re.compile(rf"wait\s+{_NUM}\s*s?,?\s*then\s+every\s+{_NUM}\s*s?")
# "backoff 2, 4, 8 … 30 s": the first delay, optionally the second (for the factor),
# any further ones, then an ellipsis and the cap.
_BACKOFF = re.compile(
    rf"backoff\s+{_NUM}\s*s?(?:\s*,\s*{_NUM}\s*s?)?(?:\s*,\s*{_N}\s*s?)*"
    rf"\s*,?\s*(?:…|\.\.\.)\s*{_NUM}\s*s?"
)


def strategy_name(strategy: Strategy) -> str:
    """A strategy's display name (its ``name`` property, else its qualified name)."""
    name = getattr(strategy, "name", None)
    if isinstance(name, str):
        return name
    module = getattr(strategy, "__module__", "?")
    return f"{module}:{getattr(strategy, '__qualname__', repr(strategy))}"


def parse_strategy(spec: str) -> Strategy:
    """A strategy from its table name or from ``package.module:function``.

    Raises ``ValueError`` naming the accepted forms when ``spec`` is none of them.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a poll strategy must be a non-empty string, got {spec!r}")
    text = spec.strip()
    low = text.lower()
    try:
        if m := _WAIT.fullmatch(low):
            return wait_then_every(float(m.group(1)), float(m.group(2)))
        if m := _EVERY.fullmatch(low):
            return every(float(m.group(1)))
        if m := _BACKOFF.fullmatch(low):
            first = float(m.group(1))
            factor = float(m.group(2)) / first if m.group(2) else 2.0
            return backoff(first, cap=float(m.group(3)), factor=factor)
    except ValueError as err:
        raise ValueError(f"poll strategy {text!r}: {err}") from err
    if ":" in text:
        module_name, _, attr = text.partition(":")
        try:
            module = importlib.import_module(module_name)
        except (ImportError, ValueError) as err:
            raise ValueError(f"cannot import {module_name!r} for strategy {text!r}: {err}") from err
        func = getattr(module, attr, None)
        if not callable(func):
            raise ValueError(f"{text!r}: {module_name} has no callable {attr!r}")
        return func  # type: ignore[no-any-return]
    raise ValueError(
        f"unknown poll strategy {text!r}: use 'every N s', 'backoff A, B … CAP s', "
        "'wait N s, then every M s' or 'package.module:function'"
    )
