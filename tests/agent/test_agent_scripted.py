"""ScriptedAgent: calls per run, lateness, retries with the same or a new key, cancels."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_osfoundry._ids import is_uuid
from pytest_osfoundry.agent._scripted import AgentRun, ScriptedAgent
from pytest_osfoundry.agent._strategies import backoff, every, wait_then_every
from pytest_osfoundry.clock import DEFAULT_START, RealClock
from pytest_osfoundry.engine import Graph
from pytest_osfoundry.world import OsfWorld, WorldConfig

T0 = DEFAULT_START


def make_world(**options: Any) -> OsfWorld:
    options.setdefault("graph", Graph(duration=31, result="ok"))
    return OsfWorld(WorldConfig(**options))


def gsid(w: OsfWorld, index: int = 0) -> str:
    return w.sessions[index].graph_session_id


# Queued at T0 (just after the first pass), started at 20, finished at 51.
@pytest.mark.parametrize(
    ("strategy", "polls", "seen", "late"),
    [
        (every(2), 26, 52, 1),
        (every(5), 11, 55, 4),
        (every(15), 4, 60, 9),
        (every(30), 2, 60, 9),
        (backoff(2, cap=30), 5, 60, 9),  # 2, 6, 14, 30, 60
        (wait_then_every(20, 10), 5, 60, 9),  # 20, 30, 40, 50, 60
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_calls_per_run_and_lateness_follow_the_strategy(
    strategy: Any, polls: int, seen: float, late: float
) -> None:
    w = make_world()
    agent = w.make_agent(strategy=strategy)
    run = agent.run(gsid(w))
    assert run.status == "completed"
    assert run.view is not None and run.view["result"] == "ok"
    assert run.start_calls == 1
    assert run.poll_calls == polls
    assert run.seen_at == T0 + seen
    assert run.finished_at == T0 + 51
    assert run.late == late
    assert [c.tool for c in run.calls] == ["run_graph_session"] + ["get_graph_run"] * polls
    assert all(c.outcome == "ok" for c in run.calls)
    poll_times = [c.at - T0 for c in run.calls if c.tool == "get_graph_run"]
    expected, t = [], 0.0
    for k in range(polls):
        t += strategy(k, t)
        expected.append(t)
    assert poll_times == expected


def test_the_default_strategy_waits_one_pickup_interval_then_every_10_s() -> None:
    w = make_world()
    run = w.make_agent().run(gsid(w))
    assert [c.at - T0 for c in run.calls if c.tool == "get_graph_run"] == [20, 30, 40, 50, 60]


def test_the_ticket_and_the_command_id() -> None:
    w = make_world()
    run = w.make_agent().start(gsid(w), {"region": "EMEA"}, poll=False)
    w.clock.advance(0)
    assert run.done.is_set
    assert run.ticket is not None and run.ticket["status"] == "queued"
    assert run.ticket["poll_after_seconds"] == 20
    assert run.command_id is not None and is_uuid(run.command_id)
    assert w.server.state.runs[run.command_id].arguments == {"region": "EMEA"}
    assert run.status == "queued"
    assert run.poll_calls == 0


def test_a_run_resumed_by_its_command_id_is_polled_not_queued_again() -> None:
    """A restarted agent that saved the command id polls that run: no second start."""
    w = make_world()
    first = w.make_agent().start(gsid(w), poll=False)
    w.clock.advance(0)
    assert first.command_id is not None
    resumed = w.make_agent().start(gsid(w), command_id=first.command_id)
    w.clock.run_until(resumed.done, limit=600)
    assert resumed.status == "completed" and resumed.command_id == first.command_id
    assert resumed.start_calls == 0 and resumed.poll_calls >= 1
    assert list(w.server.state.runs) == [first.command_id]


def test_start_is_delayed_and_returns_the_record_at_once() -> None:
    w = make_world()
    agent = w.make_agent()
    run = agent.start(gsid(w), delay=7, poll=False)
    assert isinstance(run, AgentRun) and agent.runs == [run]
    assert run.calls == []
    w.clock.advance(10)
    assert run.calls[0].at == T0 + 7


def start_many(w: OsfWorld, retry: str, n: int) -> list[AgentRun]:
    agent = w.make_agent(retry=retry, drop_replies=0.3, seed=5)  # type: ignore[arg-type]
    runs = [agent.start(gsid(w, i % 3), poll=False, delay=i) for i in range(n)]
    w.clock.run_until(lambda: all(r.done.is_set for r in runs))
    return runs


def test_same_key_retries_queue_exactly_one_run_per_agent_run() -> None:
    w = make_world()
    runs = start_many(w, "same-key", 60)
    assert all(r.error is None for r in runs)
    sent = sum(r.start_calls for r in runs)
    assert sent > 60, "some replies must have been dropped for this to prove anything"
    assert len(w.server.state.runs) == 60
    assert {r.command_id for r in runs} == set(w.server.state.runs)
    for r in runs:
        assert len(r.keys) == 1
        assert [c.outcome for c in r.calls][-1] == "ok"
        assert [c.outcome for c in r.calls][:-1] == ["lost"] * (r.start_calls - 1)


def test_new_key_retries_queue_more_runs_than_agent_runs() -> None:
    w = make_world()
    runs = start_many(w, "new-key", 60)
    assert all(r.error is None for r in runs)
    sent = sum(r.start_calls for r in runs)
    assert len(w.server.state.runs) > 60
    assert len(w.server.state.runs) <= sent
    for r in runs:
        assert len(r.keys) == r.start_calls
        assert len(set(r.keys)) == len(r.keys)


def test_a_lost_poll_reply_is_followed_by_the_next_poll() -> None:
    w = make_world()
    agent = w.make_agent(strategy=every(5), drop_replies=0.5, seed=3)
    run = agent.run(gsid(w))
    assert run.status == "completed"
    outcomes = [c.outcome for c in run.calls if c.tool == "get_graph_run"]
    assert "lost" in outcomes
    assert outcomes[-1] == "ok"


def test_no_reply_at_all_gives_up_after_max_start_attempts() -> None:
    w = make_world()
    agent = w.make_agent(drop_replies=1.0, max_start_attempts=4, retry_delay=2)
    run = agent.run(gsid(w))
    assert run.error == "no reply after 4 start calls"
    assert run.start_calls == 4
    assert [c.at - T0 for c in run.calls] == [0, 2, 4, 6]
    assert run.command_id is None


def test_a_tool_error_ends_the_run_with_its_message() -> None:
    w = make_world()
    run = w.make_agent().run("gs_" + "f" * 32)
    assert run.error == "Graph session not found or access removed"
    assert run.command_id is None
    assert [c.outcome for c in run.calls] == ["error"]


def test_max_polls_bounds_the_polling() -> None:
    w = make_world(graph=Graph(duration=10_000))
    run = w.make_agent(strategy=every(5), max_polls=3).run(gsid(w))
    assert run.error == "still not terminal after 3 polls"
    assert run.poll_calls == 3


def test_cancel_after_while_queued_is_terminal_at_once() -> None:
    w = make_world()
    run = w.make_agent(strategy=every(2)).run(gsid(w), cancel_after=5)
    assert run.cancel_at == T0 + 5
    assert run.cancel_result == {
        "command_id": run.command_id,
        "status": "cancelled",
        "cancel_requested": True,
    }
    assert run.status == "cancelled"
    # The cancel's answer is terminal (D8): the agent stops there, no read after it.
    assert run.seen_at == T0 + 5
    assert [c.tool for c in run.calls] == [
        "run_graph_session", "get_graph_run", "get_graph_run", "cancel_graph_run"
    ]
    assert run.done.is_set
    assert w.engine.runs == []


def test_cancel_after_while_running_stops_the_run_within_3_5_s() -> None:
    w = make_world(graph=Graph(duration=200))
    run = w.make_agent(strategy=every(1)).run(gsid(w), cancel_after=30)
    assert run.cancel_result is not None
    assert run.cancel_result["status"] == "running"
    assert run.cancel_result["cancel_requested"] is True
    assert run.status == "cancelled"
    assert run.finished_at is not None and run.cancel_at is not None
    assert 0 < run.finished_at - run.cancel_at <= 3.5
    assert len(w.engine.cancel_calls) == 1


def test_cancel_after_a_run_already_seen_terminal_sends_nothing() -> None:
    w = make_world(graph=Graph(duration=5))
    run = w.make_agent(strategy=every(2)).run(gsid(w), cancel_after=100)
    w.clock.advance(200)
    assert run.cancel_at is None
    assert all(c.tool != "cancel_graph_run" for c in run.calls)


def test_keys_are_deterministic_under_a_seed() -> None:
    a = make_world().make_agent(seed=9)
    b = make_world().make_agent(seed=9)
    assert [a.new_key() for _ in range(3)] == [b.new_key() for _ in range(3)]
    key = a.new_key()
    assert len(key) == 32 and int(key, 16) >= 0


def test_an_explicit_key_is_used_and_replayed() -> None:
    w = make_world()
    agent = w.make_agent()
    first = agent.start(gsid(w), key="my-own-key-123", poll=False)
    second = agent.start(gsid(w), key="my-own-key-123", poll=False)
    w.clock.advance(0)
    assert first.keys == ["my-own-key-123"]
    assert first.command_id == second.command_id
    assert len(w.server.state.runs) == 1


def test_run_needs_a_virtual_clock() -> None:
    w = make_world()
    agent = ScriptedAgent(RealClock(), w.agent_client())
    with pytest.raises(TypeError, match="VirtualClock"):
        agent.run(gsid(w))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"client": "client"}, TypeError, "client must provide the ToolClient methods"),
        ({"clock": object()}, TypeError, "clock"),
        ({"retry": "maybe"}, ValueError, "retry"),
        ({"strategy": 5}, TypeError, "strategy"),
        ({"strategy": "every 5 s"}, TypeError, "strategy"),
        ({"retry_delay": -1}, ValueError, "retry_delay"),
        ({"retry_delay": math.nan}, ValueError, "retry_delay"),
        ({"retry_delay": "1"}, ValueError, "retry_delay"),
        ({"max_start_attempts": 0}, ValueError, "max_start_attempts"),
        ({"max_start_attempts": 1.5}, ValueError, "max_start_attempts"),
        ({"max_polls": True}, ValueError, "max_polls"),
    ],
)
def test_the_constructor_refuses_bad_arguments(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    w = make_world()
    args: dict[str, Any] = {"clock": w.clock, "client": w.agent_client(), **kwargs}
    with pytest.raises(error, match=match):
        ScriptedAgent(args.pop("clock"), args.pop("client"), **args)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        ({"graph_session_id": ""}, ValueError, "graph_session_id"),
        ({"graph_session_id": None}, ValueError, "graph_session_id"),
        ({"cancel_after": -1}, ValueError, "cancel_after"),
        ({"cancel_after": math.nan}, ValueError, "cancel_after"),
        ({"cancel_after": True}, ValueError, "cancel_after"),
        ({"arguments": "not a mapping"}, TypeError, "arguments"),
        ({"arguments": [("a", 1)]}, TypeError, "arguments"),
        ({"key": 12345678}, TypeError, "key"),
        ({"delay": -1}, ValueError, "delay"),
        ({"delay": math.nan}, ValueError, "delay"),
        ({"command_id": ""}, ValueError, "command_id"),
    ],
)
def test_start_refuses_bad_arguments_and_records_nothing(
    call: dict[str, Any], error: type[Exception], match: str
) -> None:
    w = make_world()
    agent = w.make_agent()
    kwargs: dict[str, Any] = {"graph_session_id": gsid(w), **call}
    with pytest.raises(error, match=match):
        agent.start(kwargs.pop("graph_session_id"), **kwargs)
    assert agent.runs == []
    w.clock.advance(100)
    assert w.server.state.runs == {}
