"""Statistics a check needs: the Mann-Whitney U test's normal approximation.

Used by ``D6-timing`` to tell whether two latency samples come from one distribution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mann_whitney_z"]


def mann_whitney_z(a: Sequence[float], b: Sequence[float]) -> float:
    """The normal-approximation z of the Mann-Whitney U test (ties averaged)."""
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    n1, n2 = len(a), len(b)
    r1 = sum(r for r, (_, g) in zip(ranks, pooled, strict=True) if g == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return 0.0 if sd == 0 else (u1 - mean) / sd
