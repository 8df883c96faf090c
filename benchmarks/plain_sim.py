"""A plain standard-library event simulation of the seed's nine experiments: the floor.

Written apart from the kit (it imports nothing of ``pytest_osfoundry``): one heap of
timed callbacks, a dictionary server, a serial relay and polling agents, with the
model of docs/experiments.md -- relay pass every 20 s, control poll every 3 s,
Graph durations ``max(5, 60 * exp(0.81 * z))`` s, stop 0.5 s after a cancel is
seen, runs queued at a uniformly random phase against an idle relay, the seed's run
counts. ``benchmarks/bench_sim_floor.py`` times ``osfoundry-sim --jobs 2`` against
it; ``tests/sim/test_sim_plain_floor.py`` holds its figures to the seed's
tolerances, so the floor does the same work.

The offline scenario gives the seed's own reading (the relay's timer keeps its
phase through the outage, and its next tick comes 3 s after it is back: first
start +3 s, all done +131 s) and, as the what-if ``wake_at_once``, the kit's relay
(it passes the moment it is back: +0 s, +128 s).

Usage::

    python benchmarks/plain_sim.py [--runs N] [--seed S] [--json]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import statistics
import uuid
from collections.abc import Callable, Sequence
from typing import Any

INTERVAL, CONTROL, STOP = 20.0, 3.0, 0.5
MEDIAN, SIGMA, MINIMUM = 60.0, 0.81, 5.0
RUNS = {"pickup": 2000, "fanout": 1500, "polling": 2000, "cancel": 2000, "idempotency": 200}
NOT_FOUND = "Graph run not found or access removed"
LIMIT = 100_000
TERMINAL = ("completed", "failed", "cancelled")


# ---------------------------------------------------------------------- the loop
class Loop:
    """Timed callbacks on a heap; ``now`` is virtual seconds."""

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0

    def at(self, when: float, fn: Callable[[], None]) -> None:
        """Call ``fn`` at ``when`` (FIFO among equal times)."""
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, fn))

    def run_until(self, done: Callable[[], bool], limit: float = 1e9) -> None:
        """Run callbacks until ``done()`` or the virtual time passes ``limit``."""
        heap = self._heap
        while not done() and heap and heap[0][0] <= limit:
            self.now, _, fn = heapq.heappop(heap)
            fn()


# ---------------------------------------------------------------------- the server
class Run:
    __slots__ = ("agent", "cancel", "finished", "queued", "result", "started", "status")

    def __init__(self, agent: str, queued: float) -> None:
        self.agent, self.queued, self.status = agent, queued, "queued"
        self.started: float | None = None
        self.finished: float | None = None
        self.cancel = False
        self.result: str | None = None


class Server:
    """Runs by command id, idempotency keys per agent, the relay's view."""

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self.runs: dict[str, Run] = {}
        self.keys: dict[tuple[str, str], str] = {}
        self.queue: list[str] = []

    def queue_run(self, agent: str, key: str) -> str:
        cid = self.keys.get((agent, key))
        if cid is None:
            cid = str(uuid.UUID(int=len(self.runs) + 1))
            self.runs[cid] = Run(agent, self.loop.now)
            self.keys[(agent, key)] = cid
            self.queue.append(cid)
        return cid

    def own(self, agent: str, cid: str) -> Run:
        run = self.runs.get(cid)
        if run is None or run.agent != agent:
            raise LookupError(NOT_FOUND)
        return run

    def cancel(self, agent: str, cid: str) -> str:
        run = self.own(agent, cid)
        if run.status == "queued":
            run.cancel, run.status, run.finished = True, "cancelled", self.loop.now
            self.queue.remove(cid)
        elif run.status == "running":
            run.cancel = True
        return run.status

    def start(self, cid: str) -> str:
        run = self.runs[cid]
        if run.status == "queued":
            run.status, run.started = "running", self.loop.now
            self.queue.remove(cid)
        return run.status

    def complete(self, cid: str, status: str, result: str | None = None) -> None:
        run = self.runs[cid]
        if run.status not in TERMINAL:
            run.status, run.finished, run.result = status, self.loop.now, result


# ---------------------------------------------------------------------- the relay
class Relay:
    """The desktop: a pass every ``INTERVAL`` from ``phase``; runs its commands one by one."""

    def __init__(self, loop: Loop, server: Server, rng: random.Random, **opts: Any) -> None:
        self.loop, self.server, self.rng = loop, server, rng
        self.phase = float(opts.get("phase", 0.0))
        self.duration: float | None = opts.get("duration")
        self.lose = int(opts.get("lose", 0))
        self.outbox = bool(opts.get("outbox", True))
        self.offline = opts.get("offline")  # (start, end)
        self.wake_at_once = bool(opts.get("wake_at_once", False))
        self.busy = False
        self.pending: list[tuple[str, str]] = []
        self.delivered: dict[str, float] = {}
        self.executed = 0
        loop.at(self.phase, self._pass)
        if self.offline is not None and self.wake_at_once:
            loop.at(self.offline[1], self._pass_now)

    def next_pass(self) -> float:
        """The time of the next pass on the grid at or after now."""
        k = math.ceil((self.loop.now - self.phase) / INTERVAL - 1e-9)
        return self.phase + max(0, k) * INTERVAL

    def _offline(self) -> bool:
        return self.offline is not None and self.offline[0] <= self.loop.now < self.offline[1]

    def _pass(self) -> None:
        self.loop.at(self.loop.now + INTERVAL, self._pass)
        self._pass_now()

    def _pass_now(self) -> None:
        if self._offline():
            return
        for cid, status in self.pending:  # the outbox: what a lost POST left behind
            self._deliver(cid, status)
        self.pending = []
        if not self.busy and self.server.queue:
            self.busy = True
            self._next(list(self.server.queue))

    def _next(self, commands: list[str]) -> None:
        while commands:
            cid = commands.pop(0)
            if self.server.start(cid) == "running":  # a cancelled one is skipped
                self.executed += 1
                self._execute(cid, commands)
                return
        self.busy = False

    def _execute(self, cid: str, rest: list[str]) -> None:
        loop, started = self.loop, self.loop.now
        d = self.duration
        if d is None:
            d = max(MINIMUM, MEDIAN * math.exp(SIGMA * self.rng.gauss(0.0, 1.0)))
        state = {"over": False}

        def finish(status: str) -> None:
            if state["over"]:
                return
            state["over"] = True
            self._post(cid, status)
            self._next(rest)

        def control() -> None:
            if state["over"]:
                return
            if self.server.runs[cid].cancel:
                loop.at(loop.now + STOP, lambda: finish("cancelled"))
            else:
                loop.at(loop.now + CONTROL, control)

        loop.at(started + d, lambda: finish("completed"))
        loop.at(started + CONTROL, control)

    def _post(self, cid: str, status: str) -> None:
        if self.lose:
            self.lose -= 1
            if self.outbox:
                self.pending.append((cid, status))
            return
        self._deliver(cid, status)

    def _deliver(self, cid: str, status: str) -> None:
        self.server.complete(cid, status)
        self.delivered[cid] = self.loop.now


# ---------------------------------------------------------------------- agents
def strategies() -> list[tuple[str, Callable[[int], float]]]:
    """The seed's six poll strategies: the delay before poll number ``attempt``."""
    return [
        ("every 2 s", lambda a: 2.0),
        ("every 5 s", lambda a: 5.0),
        ("every 15 s", lambda a: 15.0),
        ("every 30 s", lambda a: 30.0),
        ("backoff 2, 4, 8 … 30 s", lambda a: min(30.0, 2.0 * 2.0**a)),
        ("wait 20 s, then every 10 s", lambda a: 20.0 if a == 0 else 10.0),
    ]


class Poller:
    """One agent polling one run by a strategy until it sees a terminal status."""

    def __init__(self, loop: Loop, server: Server, cid: str, delay: Callable[[int], float]):
        self.loop, self.server, self.cid, self.delay = loop, server, cid, delay
        self.calls, self.seen = 0, None
        loop.at(loop.now + delay(0), self._poll)

    def _poll(self) -> None:
        self.calls += 1
        run = self.server.own("agent", self.cid)
        if run.status in TERMINAL:
            self.seen = self.loop.now
        else:
            self.loop.at(self.loop.now + self.delay(self.calls), self._poll)


def _world(seed: int, **opts: Any) -> tuple[Loop, Server, Relay, random.Random]:
    loop = Loop()
    server = Server(loop)
    rng = random.Random(seed)
    return loop, server, Relay(loop, server, random.Random(seed + 1), **opts), rng


def _queue_at_phase(loop: Loop, relay: Relay, rng: random.Random) -> None:
    """Advance to a uniformly random point of the interval after the relay's next pass."""
    when = relay.next_pass() + rng.random() * INTERVAL
    loop.run_until(lambda: False, limit=when)
    loop.now = when


# ---------------------------------------------------------------------- experiments
def baseline(n: int, seed: int, watched: bool) -> dict[str, Any]:
    loop, server, relay, rng = _world(seed)
    rows = strategies() if watched else []
    pickup, finished = [], []
    calls: list[list[int]] = [[] for _ in rows]
    late: list[list[float]] = [[] for _ in rows]
    for i in range(n):
        _queue_at_phase(loop, relay, rng)
        cid = server.queue_run("agent", f"k{i}")
        run = server.runs[cid]
        pollers = [Poller(loop, server, cid, delay) for _, delay in rows]
        loop.run_until(lambda r=run, ps=pollers: r.status in TERMINAL and all(p.seen for p in ps))
        assert run.started is not None and run.finished is not None
        pickup.append(run.started - run.queued)
        finished.append(run.finished - run.queued)
        for j, p in enumerate(pollers):
            calls[j].append(p.calls)
            late[j].append(max(0.0, (p.seen or 0.0) - run.finished))
    return {"pickup": pickup, "finished": finished, "calls": calls, "late": late}


def fanout(k: int, batches: int, seed: int) -> tuple[list[float], list[float]]:
    loop, server, relay, rng = _world(seed)
    first, last = [], []
    for b in range(batches):
        _queue_at_phase(loop, relay, rng)
        runs = [server.runs[server.queue_run("agent", f"b{b}-{i}")] for i in range(k)]
        loop.run_until(lambda rs=runs: all(r.status in TERMINAL for r in rs))
        ends = [(r.finished or 0.0) - runs[0].queued for r in runs]
        first.append(min(ends))
        last.append(max(ends))
    return first, last


def cancel(n: int, seed: int) -> dict[str, Any]:
    loop, server, relay, rng = _world(seed)
    out: dict[str, list[float]] = {"queued": [], "running": [], "finished": []}
    for i in range(n):
        _queue_at_phase(loop, relay, rng)
        cid = server.queue_run("agent", f"c{i}")
        run = server.runs[cid]
        at = loop.now + rng.uniform(0.0, 40.0)
        answer: list[str] = []
        loop.at(at, lambda c=cid, a=answer: a.append(server.cancel("agent", c)))
        loop.run_until(lambda a=answer, r=run: bool(a) and r.status in TERMINAL)
        state = {"cancelled": "queued", "running": "running"}.get(answer[0], "finished")
        out[state].append(max(0.0, (run.finished or at) - at))
    return {
        "n": n,
        "queued": len(out["queued"]),
        "running": len(out["running"]),
        "finished": len(out["finished"]),
        "queued_terminal_after_max": max(out["queued"], default=0.0),
        "running_terminal_after_mean": statistics.fmean(out["running"]),
        "running_terminal_after_p95": percentile(out["running"], 95),
        "running_terminal_after_max": max(out["running"]),
    }


def idempotency(n: int, seed: int) -> dict[str, Any]:
    """Each start call reaches the server; 30 % of the replies are lost and retried."""
    rows = []
    for retry in ("new key on retry", "same key on retry"):
        calls, runs = [], []
        for rep in range(3):
            loop = Loop()
            server = Server(loop)
            rng = random.Random(seed * 7 + rep * 2 + (retry[0] == "s"))
            sent = 0
            for i in range(n):
                key = f"r{rep}-{i}"
                while True:
                    sent += 1
                    server.queue_run("agent", key)
                    if rng.random() >= 0.3:
                        break
                    if retry.startswith("new"):
                        key += "+"
            calls.append(sent)
            runs.append(len(server.runs))
        rows.append({"retry": retry, "calls": calls, "runs_queued": runs})
    return {"rows": rows}


def offline(wake_at_once: bool) -> dict[str, Any]:
    """Five runs queued while the desktop is offline 600 s; its timer's phase 4 s."""
    start, end = 1.0, 601.0
    loop, server, relay, _ = _world(
        0, phase=4.0, duration=25.6, offline=(start, end), wake_at_once=wake_at_once
    )
    loop.run_until(lambda: False, limit=2.0)
    loop.now = 2.0
    cids = [server.queue_run("agent", f"o{i}") for i in range(5)]
    loop.run_until(lambda: False, limit=end - 1e-3)
    while_offline = sorted({server.runs[c].status for c in cids})
    executed_offline = relay.executed
    loop.run_until(lambda: all(server.runs[c].status in TERMINAL for c in cids))
    runs = [server.runs[c] for c in cids]
    return {
        "queued": 5,
        "offline_seconds": end - start,
        "statuses_while_offline": while_offline,
        "executed_while_offline": executed_offline,
        "first_start_after_online": round(min(r.started or 0.0 for r in runs) - end, 4),
        "all_completed_after_online": round(max(r.finished or 0.0 for r in runs) - end, 4),
        "statuses_after": sorted({r.status for r in runs}),
        "executed_after": relay.executed,
    }


def outbox(keep: bool) -> dict[str, Any]:
    loop, server, relay, _ = _world(0, duration=25.6, lose=1, outbox=keep)
    loop.run_until(lambda: False, limit=1.0)
    loop.now = 1.0
    cid = server.queue_run("agent", "outbox-1")
    run = server.runs[cid]
    loop.run_until(lambda: run.status in TERMINAL, limit=3600.0)
    delivered = relay.delivered.get(cid)
    after = None if delivered is None or run.started is None else delivered - run.started
    return {"status": run.status, "delivered_after_start": after}


def truncation() -> dict[str, Any]:
    """The seed's envelope: how many characters of a result fit in 100,000 (JSON length)."""

    def length(text: str) -> int:  # JSON.stringify's length in UTF-16 code units
        body = {"execution_id": "fleet-run-0001", "status": "completed", "result": text}
        body |= {"total_tokens": 0, "reported_cost": 0}
        raw = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        return len(raw.encode("utf-16-le")) // 2

    out = {}
    for name, char in (("ascii", "a"), ("japanese", "日")):
        fits = LIMIT - length("")
        assert length(char * fits) == LIMIT and length(char * (fits + 1)) > LIMIT
        out[name] = {
            "fits_chars": fits,
            "fits_bytes": len((char * fits).encode("utf-8")),
            "one_more": "result_truncated",
        }
    return out


def access() -> dict[str, Any]:
    loop = Loop()
    server = Server(loop)
    cid = server.queue_run("agent", "access-1")
    try:
        server.own("other-agent", cid)
    except LookupError as err:
        return {"error": str(err.args[0])}
    raise AssertionError("another agent read the run")


# ---------------------------------------------------------------------- figures
def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def simulate(runs: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Every experiment's figures, in ``osfoundry-sim --json``'s shapes."""
    count = {k: runs or v for k, v in RUNS.items()}
    base = baseline(max(count["pickup"], count["polling"], count["fanout"]), seed, True)
    waits = base["pickup"][: count["pickup"]]
    out: dict[str, Any] = {
        "pickup": {
            "n": len(waits),
            "mean": statistics.fmean(waits),
            "median": statistics.median(waits),
            "p95": percentile(waits, 95),
            "max": max(waits),
        }
    }
    singles = base["finished"][: count["fanout"]]
    rows = [{"queued": 1, "first_median": statistics.median(singles)}]
    rows[0] |= {"last_median": statistics.median(singles), "last_p95": percentile(singles, 95)}
    for k in (3, 5):
        first, last = fanout(k, math.ceil(count["fanout"] / 3), seed + k)
        rows.append(
            {
                "queued": k,
                "first_median": statistics.median(first),
                "last_median": statistics.median(last),
                "last_p95": percentile(last, 95),
            }
        )
    out["fanout"] = rows
    n = count["polling"]
    out["polling"] = [
        {
            "strategy": name,
            "calls_mean": statistics.fmean(base["calls"][j][:n]),
            "calls_p95": percentile(base["calls"][j][:n], 95),
            "late_mean": statistics.fmean(base["late"][j][:n]),
            "late_p95": percentile(base["late"][j][:n], 95),
        }
        for j, (name, _) in enumerate(strategies())
    ]
    out["cancel"] = cancel(count["cancel"], seed + 11)
    out["idempotency"] = idempotency(count["idempotency"], seed)["rows"]
    out["offline"] = offline(wake_at_once=False)
    out["offline"]["wake_at_once"] = offline(wake_at_once=True)
    out["outbox"] = {"with_outbox": outbox(True), "without_outbox": outbox(False)}
    out["truncation"] = truncation()
    out["access"] = access()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run every experiment; print the figures (``--json``: one object)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, help="runs per statistical experiment")
    parser.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    figures = simulate(args.runs, args.seed)
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name}: {json.dumps(value, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
