"""A Graph as data: how long a fake run takes, what it returns, what it spends.

The desktop's real engine runs a saved JavaScript program; the kit's
:class:`~pytest_osfoundry.engine._fake_engine.FakeEngine` only needs its observable
shape, which a :class:`Graph` describes:

* ``duration`` — seconds from start to end: a fixed number or a :class:`Duration`
  sampled once per run (:class:`Fixed`, :class:`LogNormal`, :class:`Uniform`).
* ``result`` — any JSON value, or a :class:`ResultText` that produces a string of an
  exact size (for the D18 truncation bound).
* ``total_tokens`` / ``reported_cost`` — what a completed run reports.
* ``error`` — when set, the run ends ``failed`` with this error text (no result).
* ``waves`` / ``token_ceiling`` — the fleet engine's waves of agents and its hard
  token ceiling (conformance/spec.md): once the tokens spent reach the ceiling, the *next* wave
  is refused and the run ends ``failed`` with the error
  ``token ceiling of N reached; wave K refused`` (``K`` counts waves from 1). A wave
  that overshoots the ceiling still spends all its tokens; only the next is refused.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pytest_osfoundry._checks import check_count, check_number, check_seconds
from pytest_osfoundry._jslength import js_stringify

__all__ = [
    "ALPHABETS",
    "Duration",
    "Fixed",
    "Graph",
    "LogNormal",
    "ResultText",
    "Uniform",
    "ceiling_error",
    "served_graph",
]

#: The named alphabets of :class:`ResultText`; each is cycled to the wanted size.
ALPHABETS: dict[str, str] = {
    "ascii": "abcdefghijklmnopqrstuvwxyz",
    "japanese": "日本語",
    "emoji": "😀",
}
_MAX_SIGMA = 20.0


class Duration(ABC):
    """How long a run takes: :meth:`sample` draws seconds (finite, >= 0) for one run.

    Subclass it for other distributions; the engine calls :meth:`sample` once per
    run with its own seeded ``random.Random``.
    """

    @abstractmethod
    def sample(self, rng: random.Random) -> float:
        """One run's duration in seconds, drawn from ``rng``."""


@dataclass(frozen=True)
class Fixed(Duration):
    """Always ``seconds`` (finite, >= 0); draws nothing from the rng."""

    seconds: float

    def __post_init__(self) -> None:
        check_seconds(self.seconds, "Fixed.seconds")

    def sample(self, rng: random.Random) -> float:
        """``seconds``."""
        return float(self.seconds)


@dataclass(frozen=True)
class LogNormal(Duration):
    """conformance/spec.md#figures's synthetic durations: ``max(minimum, median * exp(sigma * z))``.

    ``z`` is one standard normal draw (``rng.gauss(0, 1)``) per sample, so half the
    samples fall below ``median`` (before the floor) and none below ``minimum``.
    The seed does not state the spread; ``sigma`` defaults to 1.0 until the
    simulations fit it. Requires ``median > 0``, ``0 <= sigma <= 20`` (enough for
    any fit; larger would overflow) and ``0 <= minimum <= median``.
    """

    median: float = 60.0
    sigma: float = 1.0
    minimum: float = 5.0

    def __post_init__(self) -> None:
        median = check_number(self.median, "LogNormal.median")
        sigma = check_number(self.sigma, "LogNormal.sigma")
        minimum = check_number(self.minimum, "LogNormal.minimum")
        if median <= 0:
            raise ValueError(f"LogNormal.median must be > 0, got {self.median!r}")
        if not 0 <= sigma <= _MAX_SIGMA:
            raise ValueError(f"LogNormal.sigma must be in [0, 20], got {self.sigma!r}")
        if minimum < 0:
            raise ValueError(f"LogNormal.minimum must be >= 0, got {self.minimum!r}")
        if minimum > median:
            raise ValueError(
                f"LogNormal.minimum ({self.minimum!r}) must not exceed the median ({self.median!r})"
            )

    def sample(self, rng: random.Random) -> float:
        """One draw, at least ``minimum`` seconds."""
        value = self.median * math.exp(self.sigma * rng.gauss(0.0, 1.0))
        return max(float(self.minimum), value)


@dataclass(frozen=True)
class Uniform(Duration):
    """Uniform between ``low`` and ``high`` seconds (``0 <= low <= high``)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        low = check_number(self.low, "Uniform.low")
        high = check_number(self.high, "Uniform.high")
        if low < 0:
            raise ValueError(f"Uniform.low must be >= 0, got {self.low!r}")
        if high < low:
            raise ValueError(f"Uniform.high ({self.high!r}) must be >= low ({self.low!r})")

    def sample(self, rng: random.Random) -> float:
        """One draw in ``[low, high]``."""
        return rng.uniform(float(self.low), float(self.high))


@dataclass(frozen=True)
class ResultText:
    """A result string of exactly ``size`` Python characters (code points).

    ``alphabet`` is ``"ascii"``, ``"japanese"``, ``"emoji"`` (see :data:`ALPHABETS`) or
    any other non-empty string, cycled from its start: ``ResultText(5, "japanese")``
    is ``"日本語日本"``. The alphabet names are reserved words: ``"ascii"`` always means
    the named alphabet. ``size`` counts code points, so an emoji text of size ``n``
    has a JavaScript length of ``2 * n``. The text is built once and cached.
    """

    size: int
    alphabet: str = "ascii"

    def __post_init__(self) -> None:
        check_count(self.size, "ResultText.size")
        if not isinstance(self.alphabet, str) or not self.alphabet:
            raise ValueError(
                "ResultText.alphabet must be 'ascii', 'japanese', 'emoji' or a non-empty "
                f"string to cycle, got {self.alphabet!r}"
            )

    @cached_property
    def text(self) -> str:
        """The generated string (exactly ``size`` characters)."""
        chars = ALPHABETS.get(self.alphabet, self.alphabet)
        reps, rest = divmod(self.size, len(chars))
        return chars * reps + chars[:rest]


def ceiling_error(ceiling: int, wave: int) -> str:
    """The error a run ends with when ``wave`` (counted from 1) is refused."""
    return f"token ceiling of {ceiling} reached; wave {wave} refused"


@dataclass(frozen=True)
class Graph:
    """One saved Graph's observable behaviour, as data (validated on creation).

    Attributes:
        duration: seconds (finite, >= 0) or a :class:`Duration` sampled per run.
        result: a JSON-compatible value (checked here, once) or a :class:`ResultText`.
            The same object is handed to every run: do not mutate it.
        total_tokens: tokens a completed run reports. With ``waves`` it must be 0
            (meaning "the waves' sum") or equal ``sum(waves)``.
        reported_cost: cost a completed run reports (finite, >= 0).
        error: when not ``None``, every run ends ``failed`` with this text at the end
            of its duration, spending all its tokens and cost, with no result.
        waves: tokens each wave of agents spends, in order; each wave starts at an
            even share of the duration and spends its tokens as it starts.
        token_ceiling: a hard ceiling on tokens (needs ``waves``): before each wave,
            if the tokens spent so far are >= the ceiling, the wave is refused and the
            run ends ``failed`` then, with :func:`ceiling_error` as its error.
    """

    duration: float | Duration = 60.0
    result: Any = None
    total_tokens: int = 0
    reported_cost: float = 0.0
    error: str | None = None
    waves: tuple[int, ...] = ()
    token_ceiling: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.duration, Duration):
            check_seconds(self.duration, "Graph.duration")
        if not isinstance(self.result, ResultText):
            js_stringify(self.result, name="Graph.result")
        check_count(self.total_tokens, "Graph.total_tokens")
        check_number(self.reported_cost, "Graph.reported_cost", low=0)
        if self.error is not None and not isinstance(self.error, str):
            raise TypeError(f"Graph.error must be a str or None, got {self.error!r}")
        if not isinstance(self.waves, tuple):
            raise TypeError(f"Graph.waves must be a tuple of ints, got {self.waves!r}")
        for index, tokens in enumerate(self.waves):
            check_count(tokens, f"Graph.waves[{index}]")
        planned = sum(self.waves) if self.waves else self.total_tokens
        if self.waves and self.total_tokens not in (0, planned):
            raise ValueError(
                f"Graph.total_tokens ({self.total_tokens}) must be 0 or the waves' sum "
                f"({planned}) when waves are given"
            )
        if self.token_ceiling is not None:
            check_count(self.token_ceiling, "Graph.token_ceiling")
            if not self.waves:
                raise ValueError(
                    "Graph.token_ceiling needs waves: the ceiling is checked before each wave"
                )

    @property
    def planned_tokens(self) -> int:
        """Tokens a run spends if nothing stops it: ``sum(waves)`` or ``total_tokens``."""
        return sum(self.waves) if self.waves else self.total_tokens

    def sample_duration(self, rng: random.Random) -> float:
        """One run's duration: the fixed number, or a draw from the :class:`Duration`."""
        if isinstance(self.duration, Duration):
            return self.duration.sample(rng)
        return float(self.duration)

    def result_value(self) -> Any:
        """The value a completed run returns (a :class:`ResultText` becomes its text)."""
        if isinstance(self.result, ResultText):
            return self.result.text
        return self.result


def served_graph(seconds: float) -> Graph:
    """The Graph the desktop of ``osfoundry-fake serve --relay`` runs for every session
    (either clock): ``seconds`` long, then ``completed`` with a small result, tokens
    and cost, so an agent's round trip against the program shows a whole answer.

    Raises:
        ValueError: ``seconds`` is not a finite number >= 0.
    """
    return Graph(
        duration=Fixed(seconds),
        result={"answer": "done", "graph_seconds": seconds},
        total_tokens=1200,
        reported_cost=0.0036,
    )
