"""The end-of-run accounting: it judges the server, never the load generator.

From the merged :class:`~pytest_osfoundry.load._ledger.Ledger` of every process and
the drain's final views (:mod:`pytest_osfoundry.load._drain`), all read through the
public tools:

* **lost** — a run the load knows of (an agent was answered its command id, or a
  desktop started it) that is not terminal after the drain, or that the server no
  longer knows although nobody saw it end;
* **duplicated** — one agent's idempotency key behind more than one command id (the
  agent's tickets and the runs its desktops started, whose arguments carry agent and
  key): the server queued a retry as a new run (R5);
* **ran twice** — a command the desktops started executing more than once (D14);
* **pickup wait** — ``started_at - queued_at`` of every run queued while its owner's
  desktop had nothing else queued or running, against the pass interval (the seed:
  at most one interval, half of one on average); reported, not judged, with the count
  over 1.1 intervals;
* **refused** — a credential of the target refused (401/403) or one of its URLs not
  found (404) during the run, per account and credential (the ledger's ``refused``);
* **latency** — percentiles of every tool call and relay action.

Runs that are not this load's (left queued by an earlier load, or queued by anyone
else: their arguments name no run or another run) are dropped before the accounting
(:meth:`~pytest_osfoundry.load._ledger.Ledger.drop_foreign`) and only counted.

The verdict and the exit status (:data:`EXIT`): ``green`` (0); ``red`` (1) when a run
was duplicated or ran twice, when a credential or URL was refused, when the server
stopped answering (``failures``), or when a run was lost in a valid run; ``not
valid`` (3) when the run cannot say whether the server held (an interrupted run, the
load generator could not keep up: Locust's CPU warning, its timers late by more than
a tenth of an interval, a worker's ledger missing) and nothing red was found — a
lost run then may be the generator's doing, so it is listed but not judged.
Duplicates, double runs and refusals are the server's whatever the generator's pace.
The verdict's line names its first reason (``red: account 0's desktop token refused
(401), 22 exchanges``).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry._tables import markdown_table, text_table
from pytest_osfoundry.load._drain import Final
from pytest_osfoundry.load._ledger import Ledger, percentile

__all__ = ["EXIT", "LATE_PICKUP", "Accounting", "Pickup", "account", "refusals"]

#: The exit status of each verdict.
EXIT = {"green": 0, "red": 1, "not valid": 3}

#: A pickup wait over this many pass intervals is counted as late.
LATE_PICKUP = 1.1

#: How many runs of each finding, and refusals, the table lists by name (JSON and
#: Markdown list all).
_TABLE_NAMES = 10
_LATENCY = ["request", "count", "failures", "p50 ms", "p95 ms", "p99 ms", "max ms"]


@dataclass(frozen=True)
class Pickup:
    """Pickup waits (queued to started) of runs queued to an idle desktop, in seconds."""

    runs: int
    mean: float
    median: float
    p95: float
    max: float
    late: int
    interval: float


@dataclass
class Accounting:
    """The accounting of one load run (see the module docstring)."""

    verdict: str
    exit_status: int
    interval: float
    scale: float
    runs: int
    statuses: dict[str, int]
    cancels: int
    lost: list[dict[str, Any]]
    duplicated: list[dict[str, Any]]
    ran_twice: list[dict[str, Any]]
    unanswered: list[dict[str, Any]]
    pickup: Pickup
    latency: list[dict[str, Any]]
    not_valid: list[str]
    processes: int
    late_max: float
    refused: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    foreign: int = 0
    interrupted: dict[str, Any] | None = None
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        """The accounting as JSON-ready data."""
        return asdict(self)

    def to_json(self) -> str:
        """The accounting as a JSON document."""
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @property
    def _lost_title(self) -> str:
        """``lost``, or in a run that is not valid, what those runs are: unjudged."""
        return "not terminal, not judged" if self.not_valid else "lost"

    def _summary_rows(self, limit: int | None) -> list[tuple[str, str]]:
        """The figures, then the red and not-valid lines: at most ``limit`` refusals
        by name (``None``: all of them)."""
        p = self.pickup

        def per(seconds: float) -> str:
            if not p.interval:
                return f"{seconds:.3f} s"
            return f"{seconds:.3f} s ({seconds / p.interval:.2f} intervals)"

        rows = [
            ("verdict", self.summary or self.verdict),
            ("runs queued", str(self.runs)),
            ("final statuses", ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))),
            ("cancels asked", str(self.cancels)),
            (self._lost_title, str(len(self.lost))),
            ("duplicated (agent+key)", str(len(self.duplicated))),
            ("ran twice", str(len(self.ran_twice))),
            ("starts never answered", str(len(self.unanswered))),
            ("refused", str(sum(r["count"] for r in self.refused))),
            ("pass interval", f"{self.interval:.3f} s (time scale {self.scale:g})"),
            ("pickup, idle desktop", f"{p.runs} runs"),
        ]
        if p.runs:
            rows += [
                ("pickup mean", per(p.mean)),
                ("pickup median", per(p.median)),
                ("pickup p95", per(p.p95)),
                ("pickup max", per(p.max)),
                (f"pickup over {LATE_PICKUP:g} intervals", str(p.late)),
            ]
        stop = self.interrupted
        if stop is not None and stop.get("at") is not None and stop.get("of") is None:
            # Without -t an interrupt is how the run ends: recorded, as the JSON has it.
            rows.append(("ended by an interrupt", f"at {stop['at']:.0f} s (no -t: not held "
                         "against the run)"))
        rows += [
            ("processes reporting", str(self.processes)),
            ("timers late by at most", f"{self.late_max:.3f} s"),
        ]
        if self.foreign:
            rows.append(("other runs, not counted", f"{self.foreign} (not this load's: queued "
                         "before it or by others)"))
        rows += [("red", reason) for reason in self.failures]
        shown = self.refused if limit is None else self.refused[:limit]
        rows += [("red", _refusal_text(r)) for r in shown]
        if len(shown) < len(self.refused):
            rows.append(("red", f"... and {len(self.refused) - len(shown)} more refusals "
                         "(see the JSON)"))
        rows += [("not valid", reason) for reason in self.not_valid]
        return rows

    def _latency_rows(self) -> list[list[str]]:
        return [
            [r["name"], str(r["requests"]), str(r["failures"]),
             *(f"{r[p]:g}" for p in ("p50", "p95", "p99", "max"))]
            for r in self.latency
        ]

    def _findings(self, limit: int | None) -> list[str]:
        named: list[tuple[str, list[str]]] = [
            (self._lost_title, [
                f"{r['command_id']} (agent {r['agent']}, last status {r['status']}"
                + (f", {r['detail']}" if r["detail"] else "") + ")"
                for r in self.lost
            ]),
            ("duplicated", [
                f"agent {r['agent']} key {r['key']}: " + ", ".join(r["command_ids"])
                for r in self.duplicated
            ]),
            ("ran twice", [f"{r['command_id']} started {r['starts']} times"
                           for r in self.ran_twice]),
        ]
        lines: list[str] = []
        for title, items in named:
            shown = items if limit is None else items[:limit]
            lines += [f"{title}: {item}" for item in shown]
            if len(shown) < len(items):
                lines.append(f"{title}: ... and {len(items) - len(shown)} more (see the JSON)")
        return lines

    def table(self) -> str:
        """The accounting as the terminal shows it."""
        out = ["osfoundry-load accounting",
               *text_table(None, self._summary_rows(_TABLE_NAMES), gap="  ")]
        out += ["", *text_table(["request", "count", "fail", *_LATENCY[3:]],
                                self._latency_rows(), "lrrrrrr", gap="  ")]
        findings = self._findings(_TABLE_NAMES)
        if findings:
            out += [""] + [f"  {line}" for line in findings]
        return "\n".join(out) + "\n"

    def to_markdown(self) -> str:
        """The accounting as a Markdown page."""
        out = ["# osfoundry-load accounting", ""]
        out += markdown_table(["figure", "value"], self._summary_rows(None))
        out += ["", "## Latency", "", *markdown_table(_LATENCY, self._latency_rows(), "lrrrrrr")]
        findings = self._findings(None)
        if findings:
            out += ["", "## Findings", ""] + [f"- {line}" for line in findings]
        return "\n".join(out) + "\n"


def _refusal_text(refusal: Mapping[str, Any]) -> str:
    """One refusal as a line: whose credential, which status, how many, which requests."""
    requests = ", ".join(f"{name} {n}" for name, n in sorted(refusal["requests"].items()))
    count = refusal["count"]
    what = f"{count} exchange{'s' if count != 1 else ''} ({requests})"
    if refusal["credential"] in ("mcp_url", "relay_url"):
        return (f"the {refusal['credential']} was not found ({refusal['status']}) for account "
                f"{refusal['account']}, {what}")
    return (f"account {refusal['account']}'s {refusal['credential']} refused "
            f"({refusal['status']}), {what}")


def refusals(ledger: Ledger) -> list[dict[str, Any]]:
    """The ledger's refused exchanges, one entry per account, credential and status."""
    grouped: dict[tuple[int, str, int], dict[str, int]] = defaultdict(dict)
    for (acc, credential, status, name), count in ledger.refused.items():
        requests = grouped[(acc, credential, status)]
        requests[name] = requests.get(name, 0) + count
    return [
        {"account": acc, "credential": credential, "status": status,
         "count": sum(requests.values()), "requests": dict(sorted(requests.items()))}
        for (acc, credential, status), requests in sorted(grouped.items())
    ]


def _epoch(stamp: object) -> float | None:
    parsed = parse_rfc3339(stamp)
    return None if parsed is None else parsed.timestamp()


def pickup_waits(finals: Iterable[Final], owner_of: Mapping[str, str]) -> list[float]:
    """Pickup waits of the runs queued while their owner's desktop was idle.

    A run's desktop was idle when no other run of the same owner (``owner_of`` maps an
    agent label to its owner) was queued at or before it and not yet terminal when it
    was queued. Runs never started (cancelled while queued) have no pickup wait.
    """
    by_owner: dict[str, list[tuple[float, float, float | None]]] = defaultdict(list)
    for final in finals:
        if final.view is None or final.agent is None:
            continue
        queued = _epoch(final.view.get("queued_at"))
        if queued is None:
            continue
        finished = _epoch(final.view.get("finished_at"))
        end = finished if finished is not None else math.inf
        started = _epoch(final.view.get("started_at"))
        by_owner[owner_of.get(final.agent, final.agent)].append((queued, end, started))
    waits: list[float] = []
    for runs in by_owner.values():
        runs.sort(key=lambda r: r[0])
        busy_until = -math.inf
        for queued, end, started in runs:
            if busy_until < queued and started is not None:
                waits.append(max(0.0, started - queued))
            busy_until = max(busy_until, end)
    return waits


def account(
    ledger: Ledger,
    finals: Mapping[str, Final],
    *,
    interval: float,
    scale: float = 1.0,
    owner_of: Mapping[str, str] | None = None,
    not_valid: Iterable[str] = (),
    failures: Iterable[str] = (),
    foreign: int = 0,
    interrupted: Mapping[str, Any] | None = None,
) -> Accounting:
    """Judge the run: ``ledger`` merged from every process, ``finals`` from the drain.

    ``interval`` is the pass interval in wall-clock seconds; ``owner_of`` maps an agent
    label to its owner (by default the label before its first ``.``); ``not_valid``
    holds the reasons the run cannot be judged (the load generator could not keep up,
    the run was interrupted: ``interrupted`` says when), if any; ``failures`` the
    server's failures seen outside any one run (it stopped answering); ``foreign``
    how many runs that are not this load's were dropped before judging.
    """
    owners = dict(owner_of) if owner_of is not None else {}
    for final in finals.values():
        if final.agent is not None and final.agent not in owners:
            owners[final.agent] = final.agent.split(".", 1)[0]
    reasons = list(not_valid)
    if ledger.cpu_warning:
        reasons.append("Locust warned that a load process's CPU was overloaded (over 90 %)")
    if ledger.late_max > interval / 10:
        reasons.append(
            f"the load generator's timers ran up to {ledger.late_max:.3f} s late, more than a "
            f"tenth of the {interval:.3f} s pass interval"
        )
    keys: dict[tuple[str, str], set[str]] = defaultdict(set)
    key_of: dict[str, str] = {}
    cancels = 0
    unanswered: list[dict[str, Any]] = []
    for record in ledger.runs:
        cancels += record.cancelled
        for command_id in record.command_ids:
            keys[(record.agent, record.key)].add(command_id)
            key_of[command_id] = record.key
        if not record.command_ids:
            unanswered.append({"agent": record.agent, "key": record.key, "error": record.error})
    for command_id, start in ledger.starts.items():
        if start.agent is not None and start.key is not None:
            keys[(start.agent, start.key)].add(command_id)
            key_of[command_id] = start.key
    # A start call never answered whose run a desktop ran is answered after all.
    unanswered = [u for u in unanswered if not keys.get((str(u["agent"]), str(u["key"])))]
    duplicated = [
        {"agent": agent, "key": key, "command_ids": sorted(ids)}
        for (agent, key), ids in sorted(keys.items())
        if len(ids) > 1
    ]
    ran_twice = [
        {"command_id": c, "starts": s.count, "agent": s.agent}
        for c, s in sorted(ledger.starts.items())
        if s.count > 1
    ]
    statuses: dict[str, int] = defaultdict(int)
    lost = []
    for command_id, final in sorted(finals.items()):
        status = None if final.view is None else str(final.view.get("status"))
        statuses[status or "unknown"] += 1
        if not final.terminal:
            lost.append({
                "command_id": command_id,
                "agent": final.agent,
                "key": key_of.get(command_id),
                "status": status,
                "detail": final.detail,
            })
    waits = pickup_waits(finals.values(), owners)
    pickup = Pickup(
        runs=len(waits),
        mean=statistics.fmean(waits) if waits else 0.0,
        median=statistics.median(waits) if waits else 0.0,
        p95=percentile(Counter(waits), 0.95),
        max=max(waits) if waits else 0.0,
        late=sum(1 for w in waits if w > LATE_PICKUP * interval),
        interval=interval,
    )
    lat = ledger.latencies
    latency = [
        {
            "name": name,
            "requests": lat.count(name),
            "failures": lat.failures.get(name, 0),
            "p50": lat.percentile(name, 0.50),
            "p95": lat.percentile(name, 0.95),
            "p99": lat.percentile(name, 0.99),
            "max": lat.percentile(name, 1.0),
        }
        for name in sorted(lat.times)
    ]
    refused = refusals(ledger)
    red = list(failures)
    red += [_refusal_text(r) for r in refused]
    red += [f"agent {d['agent']} key {d['key']} queued {len(d['command_ids'])} runs"
            for d in duplicated]
    red += [f"{r['command_id']} started {r['starts']} times" for r in ran_twice]
    if not reasons:
        red += [f"{len(lost)} runs lost"] if lost else []
    if red:
        verdict, summary = "red", f"red: {red[0]}"
    elif reasons:
        verdict, summary = "not valid", f"not valid: {reasons[0]}"
    else:
        verdict, summary = "green", "green"
    return Accounting(
        verdict=verdict,
        exit_status=EXIT[verdict],
        interval=interval,
        scale=scale,
        runs=len(finals),
        statuses=dict(statuses),
        cancels=cancels,
        lost=lost,
        duplicated=duplicated,
        ran_twice=ran_twice,
        unanswered=unanswered,
        pickup=pickup,
        latency=latency,
        not_valid=reasons,
        processes=ledger.sources,
        late_max=ledger.late_max,
        refused=refused,
        failures=list(failures),
        foreign=foreign,
        interrupted=dict(interrupted) if interrupted is not None else None,
        summary=summary,
    )
