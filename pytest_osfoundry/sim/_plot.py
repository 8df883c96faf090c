"""``--plot``: calls per run against lateness for the poll strategies (needs matplotlib).

Install matplotlib, or the kit's optional extra: ``pip install -e '.[plot]'`` in its clone.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from pytest_osfoundry.sim._seed_figures import SEED

__all__ = ["PlotUnavailable", "plot_polling"]


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_polling(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Draw mean calls per run (x) against mean lateness (y) for each strategy in ``rows``.

    The seed's points are overlaid (hollow markers); each simulated point has a line
    to its p95 lateness. Writes an image to ``path`` (format from its suffix) and
    returns the path.

    Raises:
        PlotUnavailable: matplotlib cannot be imported.
        ValueError: ``rows`` is empty.
    """
    if not rows:
        raise ValueError("no polling rows to plot")
    try:  # an optional extra: imported by name, so type checkers need no stubs
        matplotlib = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt = importlib.import_module("matplotlib.pyplot")
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise PlotUnavailable(
            "--plot needs matplotlib: pip install matplotlib "
            "(or the kit's [plot] extra: pip install -e '.[plot]' in its clone)"
        ) from err
    out = Path(path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, row in enumerate(rows):
        x, y = row["calls_mean"], row["late_mean"]
        ax.plot([x, x], [y, row["late_p95"]], color="0.8", zorder=1)
        ax.scatter([x], [y], zorder=3)
        ax.annotate(
            row["strategy"],
            (x, y),
            textcoords="offset points",
            xytext=(7, 5 if i % 2 == 0 else -12),
            fontsize=8,
        )
    seed = SEED["polling"]
    ax.scatter(
        [r["calls_mean"] for r in seed],
        [r["late_mean"] for r in seed],
        facecolors="none",
        edgecolors="black",
        s=80,
        zorder=2,
        label="seed",
    )
    ax.set_xscale("log")
    ticker = importlib.import_module("matplotlib.ticker")
    ax.set_xticks([2, 3, 5, 10, 20, 30, 50, 100])
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("get_graph_run calls per run (mean, log scale)")
    ax.set_ylabel("result seen late, mean (s); line to p95")
    ax.set_title("Poll strategies: calls against lateness")
    ax.legend(loc="upper right")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out
