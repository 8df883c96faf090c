"""Summary statistics the experiments report, defined once.

* :func:`percentile` interpolates linearly between order statistics (the
  "type 7" rule of R and NumPy's default): the ``q``-th percentile of
  ``x[0] <= ... <= x[n-1]`` is ``x[k] + f * (x[k+1] - x[k])`` with
  ``k + f = q / 100 * (n - 1)``. The median is the 50th percentile.
* Every function refuses an empty sample with ``ValueError`` (a statistic of
  nothing is a bug in the caller, not a zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mean", "median", "percentile", "summary"]


def _values(sample: Sequence[float], what: str) -> list[float]:
    if len(sample) == 0:
        raise ValueError(f"{what} of an empty sample")
    values = [float(x) for x in sample]
    if any(math.isnan(x) for x in values):
        raise ValueError(f"{what} of a sample containing NaN")
    return values


def mean(sample: Sequence[float]) -> float:
    """The arithmetic mean (``ValueError`` on an empty sample or a NaN)."""
    values = _values(sample, "mean")
    return math.fsum(values) / len(values)


def percentile(sample: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between order statistics (see module doc)."""
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 100:
        raise ValueError(f"q must be a number from 0 to 100, got {q!r}")
    values = sorted(_values(sample, "percentile"))
    pos = q / 100 * (len(values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(values) - 1)
    frac = pos - low
    return values[low] + frac * (values[high] - values[low])


def median(sample: Sequence[float]) -> float:
    """The 50th percentile (the mean of the middle two for an even count)."""
    return percentile(sample, 50)


def summary(sample: Sequence[float]) -> dict[str, float | int]:
    """``{"n", "mean", "median", "p95", "max"}`` of a non-empty sample."""
    values = _values(sample, "summary")
    return {
        "n": len(values),
        "mean": mean(values),
        "median": median(values),
        "p95": percentile(values, 95),
        "max": max(values),
    }
