"""What one load process saw, as plain data a worker sends its master.

A :class:`Ledger` holds:

* ``runs`` — one :class:`RunRecord` per run an agent queued: the agent, the
  idempotency key, the command id(s) the server answered, the last view the agent
  read, whether it asked to cancel;
* ``starts`` — one :class:`Start` per command a desktop started executing (counted:
  a command started twice is an execution that ran twice), with the agent, key and
  load run the run's arguments carry (:func:`tag`), so a run the agent never heard of
  (a duplicate whose reply was lost) is still traced to its agent and key, and a run
  that is not this load's (left queued by an earlier load, or queued by anyone else)
  is told apart (:meth:`Ledger.drop_foreign`);
* ``latencies`` — every exchange's time per request name (:class:`Latencies`);
* ``refused`` — the exchanges the server refused a credential or a URL of the
  target: a token answered 401/403, a fixed URL (the relay sync, an MCP request
  outside a session) answered 404 — per account, credential, status and request;
* ``answered_last`` and ``unanswered`` — when the server last answered this process
  (epoch seconds) and how many exchanges found no server (connection refused or
  reset before any answer);
* the process's health: its timers' worst lateness and whether Locust warned of CPU.

Its :func:`percentile` is the one the load's report uses, for latencies and pickup
waits alike.

Every part merges (:meth:`Ledger.merge`) and round-trips through
:meth:`Ledger.to_dict` / :meth:`Ledger.from_dict` (JSON and msgpack alike).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TAG", "Latencies", "Ledger", "RunRecord", "Start", "run_of", "tag", "tag_of"]

#: The argument every load run carries:
#: ``{"osf_load": {"agent": ..., "key": ..., "run": ...}}``.
TAG = "osf_load"


def tag(agent: str, key: str, run: str = "") -> dict[str, Any]:
    """The arguments a load run is queued with: which agent, which key, which load run
    (the master's id of this run of ``osfoundry-load``)."""
    return {TAG: {"agent": agent, "key": key, "run": run}}


def run_of(arguments: object) -> str | None:
    """The load run named in a run's arguments, or ``None`` when they name none."""
    if not isinstance(arguments, Mapping):
        return None
    value = arguments.get(TAG)
    run = value.get("run") if isinstance(value, Mapping) else None
    return run if isinstance(run, str) and run else None


def tag_of(arguments: object) -> tuple[str, str] | None:
    """``(agent, key)`` from a run's arguments, or ``None`` when it carries no tag."""
    if not isinstance(arguments, Mapping):
        return None
    value = arguments.get(TAG)
    if not isinstance(value, Mapping):
        return None
    agent, key = value.get("agent"), value.get("key")
    if isinstance(agent, str) and isinstance(key, str):
        return agent, key
    return None


@dataclass
class RunRecord:
    """One run an agent queued, as the agent saw it."""

    agent: str
    key: str
    command_ids: list[str] = field(default_factory=list)
    view: dict[str, Any] | None = None
    cancelled: bool = False
    error: str | None = None

    @property
    def status(self) -> str | None:
        """The last status the agent read (``None`` if it read none)."""
        return None if self.view is None else str(self.view.get("status"))


@dataclass
class Start:
    """A command a desktop started: how often, the agent and key it was queued with,
    and the load run its arguments name (``None``: none)."""

    count: int
    agent: str | None
    key: str | None
    run: str | None = None


def _bucket(ms: float) -> float:
    """``ms`` kept to two significant figures (the histogram's resolution)."""
    if ms <= 0 or not math.isfinite(ms):
        return 0.0
    digits = 1 - math.floor(math.log10(ms))
    return round(ms, digits)


def percentile(counts: Mapping[float, int], q: float) -> float:
    """The ``q`` (0-1) quantile of the values ``counts`` counts (value -> how many
    times): the smallest value with at least that share of the count at or below it
    (the nearest rank); 0 when nothing was counted."""
    if not counts:
        return 0.0
    need = max(1, math.ceil(q * sum(counts.values())))
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= need:
            return value
    return max(counts)


class Latencies:
    """Response times per ``"TYPE name"``, each kept to two significant figures."""

    def __init__(self) -> None:
        self.times: dict[str, Counter[float]] = {}
        self.failures: Counter[str] = Counter()

    def add(self, name: str, ms: float, failed: bool) -> None:
        """Count one exchange of ``name`` that took ``ms`` milliseconds."""
        self.times.setdefault(name, Counter())[_bucket(ms)] += 1
        if failed:
            self.failures[name] += 1

    def merge(self, other: Latencies) -> None:
        """Add ``other``'s counts to these."""
        for name, counts in other.times.items():
            self.times.setdefault(name, Counter()).update(counts)
        self.failures.update(other.failures)

    def count(self, name: str) -> int:
        """How many exchanges of ``name`` were counted."""
        return sum(self.times.get(name, Counter()).values())

    def percentile(self, name: str, q: float) -> float:
        """The ``q`` (0-1) :func:`percentile` of ``name``'s times (0 when none was counted)."""
        return percentile(self.times.get(name, {}), q)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: per name, ``[[ms, count], ...]`` and the failures."""
        return {
            "times": {n: [[ms, c] for ms, c in counts.items()] for n, counts in self.times.items()},
            "failures": dict(self.failures),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Latencies:
        """The inverse of :meth:`to_dict`."""
        made = cls()
        for name, pairs in data.get("times", {}).items():
            made.times[name] = Counter({float(ms): int(c) for ms, c in pairs})
        made.failures.update({str(n): int(c) for n, c in data.get("failures", {}).items()})
        return made


class Ledger:
    """What one load process saw (see the module docstring)."""

    def __init__(self) -> None:
        self.runs: list[RunRecord] = []
        self.starts: dict[str, Start] = {}
        self.latencies = Latencies()
        self.late_max = 0.0
        """The worst lateness of this process's timers, in wall-clock seconds."""
        self.cpu_warning = False
        """Locust warned that this process's CPU was overloaded."""
        self.sources = 0
        """How many processes' ledgers this one holds (1 for a process's own)."""
        self.refused: Counter[tuple[int, str, int, str]] = Counter()
        """Refused exchanges by (account, credential or URL field, status, request)."""
        self.answered_last = 0.0
        """When the server last answered an exchange of these processes (epoch s; 0: never)."""
        self.unanswered = 0
        """Exchanges that found no server (no status line came back)."""

    def started(self, command_id: str, arguments: object) -> None:
        """A desktop started executing ``command_id`` (queued with ``arguments``)."""
        start = self.starts.get(command_id)
        if start is not None:
            start.count += 1
            return
        tagged = tag_of(arguments)
        self.starts[command_id] = Start(
            1, tagged[0] if tagged else None, tagged[1] if tagged else None, run_of(arguments)
        )

    def drop_foreign(self, run: str) -> list[str]:
        """Forget the starts of runs that are not load run ``run``'s (left queued by an
        earlier load, or queued by anyone else); their command ids, sorted."""
        foreign = sorted(c for c, s in self.starts.items() if s.run != run)
        for command_id in foreign:
            del self.starts[command_id]
        return foreign

    def merge(self, other: Ledger) -> None:
        """Add ``other`` (another process's ledger) to this one."""
        self.runs.extend(other.runs)
        for command_id, start in other.starts.items():
            mine = self.starts.get(command_id)
            if mine is None:
                self.starts[command_id] = Start(start.count, start.agent, start.key, start.run)
            else:
                mine.count += start.count
        self.latencies.merge(other.latencies)
        self.late_max = max(self.late_max, other.late_max)
        self.cpu_warning = self.cpu_warning or other.cpu_warning
        self.sources += other.sources
        self.refused.update(other.refused)
        self.answered_last = max(self.answered_last, other.answered_last)
        self.unanswered += other.unanswered

    def to_dict(self) -> dict[str, Any]:
        """Plain data (lists, dicts, strings, numbers) for a message or a file."""
        return {
            "runs": [
                [r.agent, r.key, r.command_ids, r.view, r.cancelled, r.error] for r in self.runs
            ],
            "starts": {c: [s.count, s.agent, s.key, s.run] for c, s in self.starts.items()},
            "latencies": self.latencies.to_dict(),
            "late_max": self.late_max,
            "cpu_warning": self.cpu_warning,
            "sources": max(1, self.sources),
            "refused": [[*key, count] for key, count in self.refused.items()],
            "answered_last": self.answered_last,
            "unanswered": self.unanswered,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ledger:
        """The inverse of :meth:`to_dict`; ``ValueError`` when ``data`` is not a ledger."""
        try:
            made = cls()
            for agent, key, ids, view, cancelled, error in data["runs"]:
                made.runs.append(
                    RunRecord(str(agent), str(key), [str(i) for i in ids], view, bool(cancelled),
                              error)
                )
            for command_id, (count, agent, key, run) in data["starts"].items():
                made.starts[str(command_id)] = Start(int(count), agent, key, run)
            made.latencies = Latencies.from_dict(data["latencies"])
            made.late_max = float(data["late_max"])
            made.cpu_warning = bool(data["cpu_warning"])
            made.sources = int(data["sources"])
            for account, credential, status, name, count in data["refused"]:
                made.refused[(int(account), str(credential), int(status), str(name))] += int(count)
            made.answered_last = float(data["answered_last"])
            made.unanswered = int(data["unanswered"])
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"not a load ledger: {err!r}") from None
        return made

    @classmethod
    def combined(cls, ledgers: Iterable[Ledger]) -> Ledger:
        """One ledger holding all of ``ledgers``."""
        total = cls()
        for ledger in ledgers:
            total.merge(ledger)
        return total
