"""The drain reads every run the load knows of, through get_graph_run, bounded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_osfoundry.client._errors import ReplyLost, ToolError
from pytest_osfoundry.load import Ledger
from pytest_osfoundry.load._drain import drain, known_runs
from pytest_osfoundry.load._ledger import RunRecord, tag


class Scripted:
    """A tool client whose get_graph_run answers from a script per command id."""

    def __init__(self, script: dict[str, list[Any]], calls: list[tuple[str, str]],
                 agent: str) -> None:
        self.script = script
        self.calls = calls
        self.agent = agent

    def run_graph_session(self, graph_session_id: str, idempotency_key: str,
                          arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        raise AssertionError("the drain queues nothing")

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        raise AssertionError("the drain cancels nothing")

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        self.calls.append((self.agent, command_id))
        answers = self.script[command_id]
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, Exception):
            raise answer
        return {"command_id": command_id, "status": answer}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def _ledger() -> Ledger:
    ledger = Ledger()
    ledger.runs = [
        RunRecord("0.0", "k1", ["done"], {"command_id": "done", "status": "completed"}),
        RunRecord("0.1", "k2", ["slow"], {"command_id": "slow", "status": "queued"}),
        RunRecord("1.0", "k3", ["gone"], {"command_id": "gone", "status": "running"}),
    ]
    ledger.started("slow", tag("0.1", "k2"))
    ledger.started("dup", tag("0.1", "k2"))  # a run its agent never heard of
    ledger.started("stray", None)
    return ledger


def test_known_runs_take_agents_tickets_and_desktops_starts() -> None:
    runs = known_runs(_ledger())
    assert set(runs) == {"done", "slow", "gone", "dup", "stray"}
    assert runs["dup"].agent == "0.1"
    assert runs["stray"].agent is None and "no agent" in runs["stray"].detail
    assert runs["done"].terminal and not runs["slow"].terminal


def test_the_drain_reads_until_terminal_with_each_runs_own_agent() -> None:
    calls: list[tuple[str, str]] = []
    script: dict[str, list[Any]] = {
        "slow": ["queued", ReplyLost("lost"), "running", "completed"],
        "gone": [ToolError("Graph run not found or access removed")],
        "dup": ["completed"],
    }
    clock = Clock()
    finals = drain(_ledger(), lambda agent: Scripted(script, calls, agent), limit=10.0,
                   period=1.0, sleep=clock.sleep, now=clock.now)
    assert finals["slow"].terminal and finals["dup"].terminal
    assert not finals["gone"].terminal
    assert finals["gone"].detail == "Graph run not found or access removed"
    assert ("done" not in {c for _, c in calls})  # its agent saw it end: not read again
    assert {(a, c) for a, c in calls} == {("0.1", "slow"), ("1.0", "gone"), ("0.1", "dup")}
    assert clock.t == 10.0  # "gone" never ends: the drain stops at its limit


def test_a_drain_with_everything_ended_reads_nothing() -> None:
    ledger = Ledger()
    ledger.runs = [RunRecord("0.0", "k", ["c"], {"command_id": "c", "status": "cancelled"})]
    finals = drain(ledger, lambda agent: (_ for _ in ()).throw(AssertionError(agent)),
                   limit=5.0, period=1.0)
    assert finals["c"].terminal


def test_a_stopped_drain_reads_no_more() -> None:
    calls: list[tuple[str, str]] = []
    script: dict[str, list[Any]] = {"slow": ["queued"], "gone": ["running"], "dup": ["queued"]}
    stopped: list[bool] = []
    clock = Clock()

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        stopped.append(True)  # an interrupt during the first wait

    finals = drain(_ledger(), lambda agent: Scripted(script, calls, agent), limit=100.0,
                   period=1.0, sleep=sleep, now=clock.now, stop=lambda: bool(stopped))
    assert len(calls) == 3  # one round, then no read
    assert clock.t == 1.0
    assert not finals["slow"].terminal
