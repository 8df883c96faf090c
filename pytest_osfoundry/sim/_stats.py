"""Summary statistics the experiments report, defined once.

* :func:`interpolated` is a percentile interpolated linearly between order
  statistics (the "type 7" rule of R and NumPy's default): the ``q``-th of
  ``x[0] <= ... <= x[n-1]`` is ``x[k] + f * (x[k+1] - x[k])`` with
  ``k + f = q / 100 * (n - 1)``. The median is the 50th. It is named apart from the
  kit's one percentile (the load's nearest rank, ``load/_ledger.percentile``), which
  never reports a value that was not measured: the simulator's figures, set beside
  the seed's, keep the interpolated reading they were published with.
* Every function refuses an empty sample with ``ValueError`` (a statistic of
  nothing is a bug in the caller, not a zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_osfoundry._checks import check_number

__all__ = ["interpolated", "mean", "median", "summary"]


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


def interpolated(sample: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between order statistics (see module doc)."""
    check_number(q, "q (a percentile from 0 to 100)", low=0, high=100)
    values = sorted(_values(sample, "percentile"))
    pos = q / 100 * (len(values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(values) - 1)
    frac = pos - low
    return values[low] + frac * (values[high] - values[low])


def median(sample: Sequence[float]) -> float:
    """The 50th percentile (the mean of the middle two for an even count)."""
    return interpolated(sample, 50)


def summary(sample: Sequence[float]) -> dict[str, float | int]:
    """``{"n", "mean", "median", "p95", "max"}`` of a non-empty sample."""
    values = _values(sample, "summary")
    return {
        "n": len(values),
        "mean": mean(values),
        "median": median(values),
        "p95": interpolated(values, 95),
        "max": max(values),
    }
