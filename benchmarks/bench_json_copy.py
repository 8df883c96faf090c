"""What the reference server's JSON copy (``_relay_input.copied``) saves over ``copy.deepcopy``.

The server copies what it stores and what it answers so no caller can change its
state: the sessions ``list_graph_sessions`` answers (up to 50), the arguments of every
waiting command in a sync's answer (every sync, for as long as runs wait), the tool
listing of every ``tools/list``. Those are JSON values only, so ``copied`` walks dicts
and lists itself instead of going through ``copy.deepcopy``'s memo and dispatch.

Three payloads shaped as the server's, each copied both ways in paired rounds
(A B A B ..., each round many copies); the median of the pairs' ratios is printed.

    python benchmarks/bench_json_copy.py [--rounds 15] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.server._relay_input import copied
from pytest_osfoundry.server._tools import TOOLS


def _payloads() -> dict[str, Any]:
    sessions = [
        {
            "graph_session_id": f"gs_{i:032x}",
            "slug": f"session-{i}",
            "title": f"Session {i}",
            "node_count": i,
            "updated_at": "2026-12-03T00:00:00Z",
            "tags": ["bench", "fixed"],
        }
        for i in range(50)
    ]
    waiting = [
        {"inputs": {"prompt": f"run {i}", "temperature": 0.5, "flags": [1, 2, 3]}}
        for i in range(40)
    ]
    return {
        "list_graph_sessions (50 sessions)": sessions,
        "a sync's waiting arguments (40 runs)": waiting,
        "tools/list (the four tools)": list(TOOLS),
    }


def _time(copy_one: Callable[[Any], Any], value: Any, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        copy_one(value)
    return (time.perf_counter() - start) / repeat


def measure(rounds: int, repeat: int = 200) -> dict[str, dict[str, float]]:
    """Per payload: microseconds per copy each way (medians) and the paired ratio."""
    out: dict[str, dict[str, float]] = {}
    for name, value in _payloads().items():
        if copied(value) != value or copied(value) is value:
            raise SystemExit(f"copied() did not copy {name} equal and new")
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(rounds):
            ours.append(_time(copied, value, repeat))
            theirs.append(_time(copy.deepcopy, value, repeat))
        out[name] = {
            "copied_us": round(statistics.median(ours) * 1e6, 1),
            "deepcopy_us": round(statistics.median(theirs) * 1e6, 1),
            "deepcopy_over_copied": round(
                statistics.median(t / o for o, t in zip(ours, theirs, strict=True)), 2
            ),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="paired rounds (at least 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.rounds < 3:
        parser.error("--rounds must be at least 3")
    figures = measure(args.rounds)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"copied() against copy.deepcopy(), {args.rounds} paired rounds (medians)")
    for name, row in figures.items():
        print(
            f"  {name}: {row['copied_us']} us against {row['deepcopy_us']} us "
            f"(deepcopy takes {row['deepcopy_over_copied']}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
