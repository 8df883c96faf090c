"""Text tables of the simulation beside the seed's figures, with the difference.

:func:`render` turns a :class:`~pytest_osfoundry.sim._runner.SimRun` into the text
``osfoundry-sim`` prints: one block per experiment, each figure as
``sim / seed (difference)``. The difference is relative (``+3.1%``) when the seed's
figure is not zero, absolute otherwise; a figure the seed does not give shows ``—``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pytest_osfoundry._checks import is_number
from pytest_osfoundry._tables import text_table
from pytest_osfoundry.sim._runner import SimRun
from pytest_osfoundry.sim._seed_figures import SEED, SEED_WALL_SECONDS
from pytest_osfoundry.sim._tasks import NAMES

__all__ = ["compare", "render"]

_DASH = "—"


def _num(value: Any, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}{unit}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}{unit}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def compare(sim: Any, seed: Any, unit: str = "", digits: int = 1) -> str:
    """``"sim / seed (difference)"`` for numbers; ``"sim / seed"`` otherwise."""
    if seed is None:
        return f"{_num(sim, unit, digits)} / {_DASH}"
    both_numbers = is_number(sim) and is_number(seed)
    if not both_numbers:
        mark = "" if sim == seed else "  (differs)"
        return f"{_num(sim, unit, digits)} / {_num(seed, unit, digits)}{mark}"
    diff = float(sim) - float(seed)
    # A percentage of a zero (or against a zero: "-100.0%") says nothing: show seconds.
    relative = bool(seed) and bool(sim)
    delta = f"{100 * diff / float(seed):+.1f}%" if relative else f"{diff:+.{digits}f}{unit}"
    return f"{_num(sim, unit, digits)} / {_num(seed, unit, digits)} ({delta})"


def _pickup(sim: dict[str, Any]) -> list[str]:
    seed = SEED["pickup"]
    rows = [[key, compare(sim[key], seed[key], " s")] for key in ("mean", "median", "p95", "max")]
    return [
        f"Pickup wait (queued → started), n = {sim['n']:,}",
        "",
        *text_table(["", "sim / seed (diff)"], rows),
    ]


def _fanout(sim: list[dict[str, Any]]) -> list[str]:
    seed_rows = {r["queued"]: r for r in SEED["fanout"]}
    rows = []
    for row in sim:
        seed = seed_rows.get(row["queued"], {})
        rows.append(
            [
                str(row["queued"]),
                compare(row["first_median"], seed.get("first_median"), " s", 0),
                compare(row["last_median"], seed.get("last_median"), " s", 0),
                compare(row["last_p95"], seed.get("last_p95"), " s", 0),
            ]
        )
    batches = " / ".join(f"{r['n']:,}" for r in sim)
    return [
        f"Runs queued at once (serial relay; result = the server's finished_at; {batches} batches)",
        "",
        *text_table(
            ["queued", "first result, median", "last result, median", "last result, p95"], rows
        ),
    ]


def _polling(sim: list[dict[str, Any]]) -> list[str]:
    seed_rows = {r["strategy"]: r for r in SEED["polling"]}
    rows = []
    for row in sim:
        seed = seed_rows.get(row["strategy"], {})
        rows.append(
            [
                row["strategy"],
                compare(row["calls_mean"], seed.get("calls_mean")),
                compare(row["calls_p95"], seed.get("calls_p95"), "", 0),
                compare(row["late_mean"], seed.get("late_mean"), " s"),
                compare(row["late_p95"], seed.get("late_p95"), " s"),
            ]
        )
    return [
        f"Agent polling, {sim[0]['n']:,} runs a row (calls = get_graph_run calls per run)",
        "",
        *text_table(
            ["strategy", "calls/run mean", "calls p95", "seen late, mean", "seen late, p95"], rows
        ),
    ]


def _cancel(sim: dict[str, Any]) -> list[str]:
    seed = SEED["cancel"]
    rows = [
        ["still queued", compare(sim["queued"], seed["queued"])],
        ["already running", compare(sim["running"], seed["running"])],
        ["already finished", compare(sim["finished"], seed["finished"])],
        [
            "queued: terminal after, max",
            compare(sim["queued_terminal_after_max"], seed["queued_terminal_after_max"], " s"),
        ],
        ["queued: never started", compare(sim["queued_never_started"], seed["queued"])],
        [
            "running: terminal after, mean",
            compare(sim["running_terminal_after_mean"], seed["running_terminal_after_mean"], " s"),
        ],
        [
            "running: terminal after, p95",
            compare(sim["running_terminal_after_p95"], seed["running_terminal_after_p95"], " s"),
        ],
        [
            "running: terminal after, max",
            compare(sim["running_terminal_after_max"], seed["running_terminal_after_max"], " s"),
        ],
    ]
    return [
        f"Cancel at a random 0-40 s after queueing, n = {sim['n']:,}",
        "",
        *text_table(["", "sim / seed (diff)"], rows),
    ]


def _idempotency(sim: list[dict[str, Any]]) -> list[str]:
    seed_rows = {r["retry"]: r for r in SEED["idempotency"]}
    rows = []
    for row in sim:
        seed = seed_rows.get(row["retry"], {})
        cells = [row["retry"]]
        for key in ("calls", "runs_queued"):
            mine = row[key]
            theirs = seed.get(key)
            cells.append(" / ".join(str(v) for v in mine))
            cells.append(" / ".join(str(v) for v in theirs) if theirs else _DASH)
            mean_seed = sum(theirs) / len(theirs) if theirs else None
            cells.append(compare(sum(mine) / len(mine), mean_seed))
        rows.append(cells)
    reps = len(sim[0]["calls"]) if sim else 0
    runs = sim[1]["runs_queued"][0] if len(sim) > 1 and sim[1]["runs_queued"] else "?"
    return [
        f"Idempotency, replies dropped so the client retries ({reps} repetitions of "
        f"{runs} runs; same key: runs queued = runs)",
        "",
        *text_table(
            [
                "retry behaviour",
                "calls sent",
                "seed",
                "mean: sim / seed",
                "Graph runs queued",
                "seed",
                "mean: sim / seed",
            ],
            rows,
        ),
    ]


def _pairs(title: str, sim: dict[str, Any], seed: dict[str, Any], keys: Sequence[str]) -> list[str]:
    rows = []
    for key in keys:
        unit = " s" if key.endswith(("_after_online", "_seconds")) else ""
        rows.append([key.replace("_", " "), compare(sim.get(key), seed.get(key), unit)])
    return [title, "", *text_table(["", "sim / seed (diff)"], rows)]


def _offline(sim: dict[str, Any]) -> list[str]:
    lines = _pairs(
        f"Desktop offline {sim['offline_seconds']:g} s with {sim['queued']} runs queued "
        "(times after it comes back online)",
        sim,
        SEED["offline"],
        [
            "statuses_while_offline",
            "executed_while_offline",
            "first_start_after_online",
            "all_completed_after_online",
            "statuses_after",
            "executed_after",
        ],
    )
    what_if = sim.get("what_if_wake_at_once")
    if isinstance(what_if, dict):
        first, done = what_if["first_start_after_online"], what_if["all_completed_after_online"]
        lines.append(
            "  (the seed's reading: the relay's timer keeps its phase through the outage; "
            f"what if it woke at once: first start +{first:.1f} s, all completed +{done:.1f} s)"
        )
    return lines


def _outbox(sim: dict[str, Any]) -> list[str]:
    seed = SEED["outbox"]
    rows = []
    for case in ("with_outbox", "without_outbox"):
        mine, theirs = sim[case], seed[case]
        delivered = compare(mine["delivered_after_start"], theirs["delivered_after_start"], " s")
        if mine["delivered_after_start"] is None and mine.get("watched_seconds"):
            delivered += f"  (never, watched {mine['watched_seconds']:g} s)"
        rows.append([case.replace("_", " "), compare(mine["status"], theirs["status"]), delivered])
    headers = ["", "status", "delivered after start"]
    return ["Completion POST lost once", "", *text_table(headers, rows)]


def _truncation(sim: dict[str, Any]) -> list[str]:
    seed = SEED["truncation"]
    rows = []
    for name in ("ascii", "japanese"):
        mine, theirs = sim[name], seed[name]
        rows.append(
            [
                name,
                compare(mine["seed_envelope_fits_chars"], theirs["fits_chars"], "", 0),
                compare(mine["seed_envelope_fits_bytes"], theirs["fits_bytes"], "", 0),
                f"{_num(mine['fits_chars'])} chars = {_num(mine['fits_bytes'])} bytes",
                compare(mine["one_more"], theirs["one_more"]),
            ]
        )
    return [
        "Truncation boundary (D18): result text that still fits",
        f"  in the seed's envelope (overhead {sim['seed_envelope_overhead']} characters) and "
        f"through the relay's own envelope (overhead {sim['envelope_overhead']}: its execution "
        "ids are longer)",
        "",
        *text_table(
            ["text", "seed envelope: chars", "bytes", "through the relay", "one char more"], rows
        ),
    ]


def _access(sim: dict[str, Any]) -> list[str]:
    rows = [
        ["another agent reads the run", compare(sim["error"], SEED["access"]["error"])],
        ["another agent cancels it", _num(sim["cancel_error"])],
        ["same answer as an invented id", _num(sim["same_as_unknown_id"])],
        ["the owner can still read it", _num(sim["owner_can_read"])],
    ]
    return ["Another agent reading the run", "", *text_table(["", "sim / seed"], rows)]


_RENDER: dict[str, Callable[[Any], list[str]]] = {
    "pickup": _pickup,
    "fanout": _fanout,
    "polling": _polling,
    "cancel": _cancel,
    "idempotency": _idempotency,
    "offline": _offline,
    "outbox": _outbox,
    "truncation": _truncation,
    "access": _access,
}


def render(run: SimRun, *, timing: bool = True) -> str:
    """The text report of ``run`` (see module doc); ``timing`` adds the speed line."""
    p = run.params
    lines = [
        "osfoundry-sim: the seed's experiments through the kit's fake server, relay, "
        "engine and agents",
        f"model: relay pass every {p.poll_interval:g} s, control poll {p.control_poll:g} s, "
        f"Graph durations lognormal (median {p.duration_median:g} s, sigma "
        f"{p.duration_sigma:g}, at least {min(p.duration_min, p.duration_median):g} s), "
        f"stop latency {p.stop_latency:g} s, seed {p.seed}",
        "figures: sim / seed (difference)",
    ]
    for name in run.names:
        lines.append("")
        lines.extend(_RENDER[name](run.experiments[name]))
    if timing:
        lines.append("")
        # The seed's wall time is for every experiment at its own run counts: compare
        # only a run of the same size.
        whole = set(run.names) == set(NAMES) and p.runs is None
        seed_time = f" (the seed, all experiments: {SEED_WALL_SECONDS} s)" if whole else ""
        lines.append(
            f"{len(run.names)} experiment(s), {run.events:,} clock events in "
            f"{run.wall:.2f} s wall ({run.events_per_second:,.0f} events/s), "
            f"{run.cpu:.2f} s CPU, --jobs {run.jobs}{seed_time}"
        )
    return "\n".join(lines) + "\n"
