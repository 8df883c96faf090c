"""The seed's figures as data, in the shapes ``osfoundry-sim --json`` prints.

:data:`SEED` holds, per experiment, exactly what the seed's write-up reports; the
simulation's own results use the same keys, so a report can put them side by side.
Seconds are numbers; counts are ints. Figures the seed does not give are absent
(never guessed), and :data:`SEED_RUNS` records how many runs each figure came from.
"""

from __future__ import annotations

from typing import Any, Final

from pytest_osfoundry._vocabulary import RUN_NOT_FOUND

__all__ = ["ACCESS_ERROR", "SEED", "SEED_RUNS", "SEED_WALL_SECONDS", "STRATEGY_NAMES"]

#: The error another agent gets when it reads the run (SPEC D5/D6, §5).
ACCESS_ERROR: Final = RUN_NOT_FOUND

#: The six rows of the polling table, named as the seed names them.
STRATEGY_NAMES: Final = (
    "every 2 s",
    "every 5 s",
    "every 15 s",
    "every 30 s",
    "backoff 2, 4, 8 … 30 s",
    "wait 20 s, then every 10 s",
)

#: Wall time of the seed's whole run (all experiments, Apple M1, Python 3.9.6).
SEED_WALL_SECONDS: Final = 2.8

#: How many runs the seed used where it says so (the rest: "500-2,000 per experiment").
SEED_RUNS: Final[dict[str, int]] = {
    "pickup": 2000,
    "polling": 2000,
    "cancel": 2000,
    "idempotency": 200,
}

SEED: Final[dict[str, Any]] = {
    "pickup": {"n": 2000, "mean": 9.8, "median": 9.8, "p95": 18.9, "max": 20.0},
    "fanout": [
        {"queued": 1, "first_median": 74.0, "last_median": 74.0, "last_p95": 254.0},
        {"queued": 3, "first_median": 73.0, "last_median": 233.0, "last_p95": 483.0},
        {"queued": 5, "first_median": 75.0, "last_median": 399.0, "last_p95": 776.0},
    ],
    "polling": [
        {
            "strategy": STRATEGY_NAMES[0],
            "calls_mean": 47.1,
            "calls_p95": 118.0,
            "late_mean": 1.0,
            "late_p95": 1.9,
        },
        {
            "strategy": STRATEGY_NAMES[1],
            "calls_mean": 19.1,
            "calls_p95": 48.0,
            "late_mean": 2.5,
            "late_p95": 4.8,
        },
        {
            "strategy": STRATEGY_NAMES[2],
            "calls_mean": 6.7,
            "calls_p95": 16.0,
            "late_mean": 7.5,
            "late_p95": 14.2,
        },
        {
            "strategy": STRATEGY_NAMES[3],
            "calls_mean": 3.6,
            "calls_p95": 8.0,
            "late_mean": 14.9,
            "late_p95": 28.4,
        },
        {
            "strategy": STRATEGY_NAMES[4],
            "calls_mean": 6.6,
            "calls_p95": 11.0,
            "late_mean": 14.8,
            "late_p95": 28.4,
        },
        {
            "strategy": STRATEGY_NAMES[5],
            "calls_mean": 8.8,
            "calls_p95": 23.0,
            "late_mean": 5.0,
            "late_p95": 9.6,
        },
    ],
    "cancel": {
        "n": 2000,
        "queued": 523,
        "running": 1370,
        "finished": 107,
        "queued_terminal_after_max": 0.0,
        "running_terminal_after_mean": 2.0,
        "running_terminal_after_p95": 3.3,
        "running_terminal_after_max": 3.5,
    },
    "idempotency": [
        {"retry": "new key on retry", "calls": [266, 302, 286], "runs_queued": [266, 302, 286]},
        {"retry": "same key on retry", "calls": [270, 291, 275], "runs_queued": [200, 200, 200]},
    ],
    "offline": {
        "queued": 5,
        "offline_seconds": 600.0,
        "statuses_while_offline": ["queued"],
        "executed_while_offline": 0,
        "first_start_after_online": 3.0,
        "all_completed_after_online": 131.0,
        "statuses_after": ["completed"],
        "executed_after": 5,
    },
    "outbox": {
        "with_outbox": {"status": "completed", "delivered_after_start": 40.0},
        "without_outbox": {"status": "running", "delivered_after_start": None},
    },
    "truncation": {
        "ascii": {"fits_chars": 99899, "fits_bytes": 99899, "one_more": "result_truncated"},
        "japanese": {"fits_chars": 99899, "fits_bytes": 299697, "one_more": "result_truncated"},
    },
    "access": {"error": ACCESS_ERROR},
}
