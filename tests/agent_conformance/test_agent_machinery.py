"""The agent suite's machinery: the process, the contract's environment, the preflight,
and an agent that crashes, hangs, floods its output or never calls a tool -- each ends
with a verdict within its deadline and leaves no process behind."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.agent import AgentSuite, _harness
from pytest_osfoundry.conformance.agent._harness import CONTRACT
from pytest_osfoundry.conformance.agent._instrumented import McpCall
from pytest_osfoundry.conformance.agent._preflight import (
    AgentPreflightError,
    agent_preflight,
    preflight_seconds,
)
from pytest_osfoundry.conformance.agent._process import (
    OUTPUT_KEPT,
    AgentCommandError,
    AgentProcess,
    split_agent_command,
)
from pytest_osfoundry.conformance.suite._expect import CheckFailure
from pytest_osfoundry.conformance.suite._registry import find_check
from pytest_osfoundry.server import ServerState
from pytest_osfoundry.world import OsfWorld, WorldConfig

PY = sys.executable
INTERVAL = 0.2


@pytest.fixture(scope="module")
def suite() -> Iterator[AgentSuite]:
    made = AgentSuite("embedded", interval=INTERVAL)
    yield made
    made.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ", 1)[1].startswith("Z"))


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` is dead (or a zombie) within ``within`` seconds: a SIGKILL sent to
    a process group is delivered to each member shortly, not at once."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _script(code: str) -> list[str]:
    return [PY, "-c", code]


def test_split_agent_command() -> None:
    assert split_agent_command("embedded") == [PY, "-m", "pytest_osfoundry.agent"]
    assert split_agent_command("node 'my agent.js' --x") == ["node", "my agent.js", "--x"]
    with pytest.raises(AgentCommandError, match="cannot be split"):
        split_agent_command("node 'open")
    with pytest.raises(AgentCommandError, match="empty"):
        split_agent_command("   ")


def test_tickets_say_the_worlds_pickup_interval() -> None:
    assert ServerState().poll_after_seconds == 20
    assert ServerState(poll_after_seconds=0.5).poll_after_seconds == 0.5
    with pytest.raises(ValueError, match="poll_after_seconds"):
        ServerState(poll_after_seconds=0)
    world = OsfWorld(WorldConfig(interval=5, poll_after=5))
    ticket = world.agent_client().run_graph_session(world.sessions[0].graph_session_id, "k" * 16)
    assert ticket["poll_after_seconds"] == 5
    assert OsfWorld(WorldConfig()).server.state.poll_after_seconds == 20
    with pytest.raises(ValueError, match="poll_after"):
        OsfWorld(WorldConfig(poll_after=-1))


def test_the_contract_is_given_and_the_ticket_agrees(suite: AgentSuite) -> None:
    conf = suite.context("A5-fresh-key-per-run")
    try:
        task = conf.run_task()
        env = conf.env(task, "/tmp/r.json", 9.0)
        assert sorted(env) == sorted(CONTRACT)
        assert json.loads(env["OSF_AGENT_TASK"]) == task
        assert task["graph_session_id"] in env["OSF_AGENT_TASK_TEXT"]
        assert env["OSF_AGENT_SCENARIO"] == "A5-fresh-key-per-run"
        assert env["OSF_AGENT_PICKUP_INTERVAL"] == "0.2" and env["OSF_AGENT_DEADLINE"] == "9"
        outcome = conf.run(task)
        assert outcome.exit_code == 0, outcome.output_tail
        ticket = next(c.result for c in conf.calls("run_graph_session") if c.result)
        assert ticket is not None and ticket["poll_after_seconds"] == INTERVAL
        assert conf.token not in json.dumps(conf.record())  # the calls carry no token
    finally:
        conf.close()


def test_blind_gives_an_opaque_scenario() -> None:
    blind = AgentSuite("embedded", interval=INTERVAL, blind=True)
    try:
        conf = blind.context("A1-first-look")
        names = {conf.env(conf.run_task(), "r", 1.0)["OSF_AGENT_SCENARIO"] for _ in range(2)}
        conf.close()
        assert len(names) == 2 and not any("A1" in n or "look" in n for n in names)
    finally:
        blind.close()


def test_a_crashing_agent_fails_naming_what_it_printed(suite: AgentSuite) -> None:
    code = "import os, sys; print('boom', os.environ['OSF_AGENT_TOKEN']); sys.exit(3)"
    conf = suite.context("D7-agent-key-length", argv=_script(code))
    try:
        with pytest.raises(CheckFailure) as caught:
            find_check("D7-agent-key-length")(conf)
        message = str(caught.value)
        assert "never called run_graph_session" in message and "boom ***" in message
        assert conf.token not in message
        outcome = conf.outcomes[0]
        assert outcome.exit_code == 3 and not outcome.stopped
        assert outcome.report is None and "wrote no report" in str(outcome.report_problem)
    finally:
        conf.close()


def test_a_hanging_agent_is_stopped_at_its_deadline_with_its_children(suite: AgentSuite) -> None:
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    conf = suite.context("D7-agent-key-length", argv=_script(code))
    try:
        began = time.monotonic()
        outcome = conf.run(conf.run_task(), deadline=1.0)
        # Its deadline, the suite's second of slack, and SIGTERM's grace (honoured at once here).
        assert time.monotonic() - began < 1.0 + 1.0 + 5.0
        assert outcome.stopped and outcome.exit_code == -15
        child = int(outcome.output_tail.split()[0])
        assert _gone(child) and _gone(conf.process.pid)  # type: ignore[union-attr]
    finally:
        conf.close()


def test_sigterm_ignored_means_sigkill_for_the_whole_group() -> None:
    code = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    process = AgentProcess(_script(code), {}, secrets=[])
    deadline = time.monotonic() + 10
    while not process.output_text().strip() and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(process.output_text().split()[0])
    assert process.stop(grace=0.3) == -9
    assert _gone(child) and _gone(process.pid)


def test_a_flooding_agent_costs_bounded_memory_and_is_stopped(suite: AgentSuite) -> None:
    code = "import sys\nline = 'x' * 1000 + '\\n'\nwhile True:\n    sys.stdout.write(line)\n"
    conf = suite.context("D7-agent-key-length", argv=_script(code))
    try:
        outcome = conf.run(conf.run_task(), deadline=0.5)
        assert outcome.stopped
        assert outcome.output_bytes > 2 * OUTPUT_KEPT
        assert len(conf.process.output_text()) <= OUTPUT_KEPT  # type: ignore[union-attr]
        assert outcome.output_tail.splitlines()[-1] == "x" * 1000
    finally:
        conf.close()


def test_preflight_names_an_agent_that_never_calls_a_tool() -> None:
    quiet = AgentSuite(
        f"{PY} -c 'print(\"thinking\", flush=True); import time; time.sleep(600)'",
        interval=INTERVAL,
    )
    try:
        began = time.monotonic()
        with pytest.raises(AgentPreflightError) as caught:
            agent_preflight(quiet, ready_seconds=1.0)
        assert time.monotonic() - began < 1.0 + 4.0
        message = str(caught.value)
        assert message.startswith("the agent made no tool call within 1 s of its start")
        assert message.endswith("the agent's last lines of output:\nthinking")
    finally:
        quiet.close()


def test_the_preflight_waits_five_intervals_and_at_least_3_s() -> None:
    assert preflight_seconds(0.2) == 3.0 and preflight_seconds(2.0) == 10.0


def test_preflight_names_a_command_not_found() -> None:
    missing = AgentSuite("no-such-agent-xyz", interval=INTERVAL)
    try:
        with pytest.raises(AgentPreflightError, match=r"^the agent command was not found: no-such"):
            agent_preflight(missing)
    finally:
        missing.close()


def test_the_embedded_agent_refuses_a_malformed_contract(tmp_path: Path) -> None:
    from pytest_osfoundry.agent._contract import EXIT_USAGE, main

    env = {name: "x" for name in CONTRACT}
    env.update(OSF_AGENT_PICKUP_INTERVAL="2", OSF_AGENT_DEADLINE="5", OSF_AGENT_TASK="[1]")
    assert main(env) == EXIT_USAGE
    env["OSF_AGENT_TASK"] = '{"kind": "run"}'
    env["OSF_AGENT_PICKUP_INTERVAL"] = "soon"
    assert main(env) == EXIT_USAGE


def test_an_agent_ended_by_the_suites_stop_is_no_verdict() -> None:
    """Ctrl-C can end the agent (its group killed) before the wait loop sees the flag: the
    check is interrupted (not run), never failed on the exit code the suite caused."""
    from pytest_osfoundry.conformance.scheduling._waits import Interrupted

    stopping = AgentSuite("embedded", interval=INTERVAL)
    conf = stopping.context("D7-agent-key-length", argv=_script("import time; time.sleep(30)"))

    def the_stop_comes_now() -> bool:
        stopping.interrupted.set()
        return True

    try:
        with pytest.raises(Interrupted):
            conf.run(
                {"kind": "run", "graph_session_id": "gs_" + "0" * 32, "arguments": {}},
                stop_when=the_stop_comes_now,
            )
        assert conf.outcomes == []
    finally:
        conf.close()
        stopping.close()


def test_a_wait_looks_again_at_the_agents_next_request(
    suite: AgentSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``conf.wait`` is woken by the request it waits for, not by its tick (here 30 s):
    a check never sleeps a fixed time when a request is the event."""
    monkeypatch.setattr(_harness, "WAIT_TICK", 30.0)
    conf = suite.context("D7-agent-key-length")
    call = McpCall(time.time(), time.time(), "POST", "tools/call", "get_graph_run", {}, 200)
    timer = threading.Timer(0.2, conf.lane.record, [call])
    try:
        timer.start()
        began = time.monotonic()
        assert conf.wait(lambda: bool(conf.calls("get_graph_run")), 60.0)
        assert time.monotonic() - began < 20.0  # the request woke it, long before the tick
    finally:
        timer.cancel()
        conf.close()


def test_a_failure_quoting_what_the_agent_sent_masks_its_token(suite: AgentSuite) -> None:
    # A check's message may quote the agent's arguments or report (the retry's key, the
    # reported status); an agent that put its token there must not see it in the reports.
    conf = suite.context("A5-same-key-after-503")
    try:
        with pytest.raises(CheckFailure) as caught:
            conf.expect(False, f"the retry asked ('gs_1', {conf.token!r}, {{}})")
        assert conf.token not in str(caught.value) and "***" in str(caught.value)
    finally:
        conf.close()


def test_a3_judges_each_gap_less_the_suite_s_own_stalls(
    suite: AgentSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # backs-off leaves gaps over two intervals while the desktop is offline (it fails
    # A3: tests/agent_conformance/test_broken_agents.py); with the suite itself kept
    # from running throughout, those gaps are the machine's, not the agent's.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    argv = [PY, "-m", "tests.agent_conformance.broken", "backs-off"]
    conf = suite.context("A3-patient-while-offline", argv=argv)
    now = time.time()
    suite.stalls.woke(now, now + 600.0)
    try:
        find_check("A3-patient-while-offline")(conf)
        assert conf.measures["stalled_seconds"] > 0
        assert max(conf.measures["gaps_intervals_offline"]) > 2.0
    finally:
        suite.stalls._stalls.clear()
        conf.close()


def test_a_second_intended_run_is_not_a_restart(suite: AgentSuite) -> None:
    # An agent that keeps its saved command id once the task is done polls it when
    # started again with the same OSF_AGENT_STATE_DIR, as the contract says of a
    # restart; A5-fresh-key-per-run's second start is a new intended run, so it gets an
    # empty folder and such an agent passes.
    code = (
        "import sys; from pytest_osfoundry.agent._contract import SavedRuns, main; "
        "SavedRuns.forget = lambda self: None; sys.exit(main())"
    )
    conf = suite.context("A5-fresh-key-per-run", argv=[PY, "-c", code])
    try:
        find_check("A5-fresh-key-per-run")(conf)
        assert len(conf.runs()) == 2
    finally:
        conf.close()


def test_an_agent_that_looks_first_and_stops_at_a_401_passes_the_revoked_token(
    suite: AgentSuite,
) -> None:
    # A6: a 401 is final. An agent that lists the sessions before its start sees the
    # 401 there and reports it, never starting: no start is owed.
    code = (
        "import sys; from pytest_osfoundry.agent._contract import ContractAgent, main\n"
        "class LooksFirst(ContractAgent):\n"
        "    def do(self):\n"
        "        self.find_session('any')\n"
        "        super().do()\n"
        "sys.exit(main(agent_type=LooksFirst))\n"
    )
    conf = suite.context("A6-revoked-token", argv=[PY, "-c", code])
    try:
        find_check("A6-revoked-token")(conf)
        assert [c.tool for c in conf.calls() if c.tool] == ["list_graph_sessions"]
    finally:
        conf.close()


def test_the_cancel_checks_early_stop_leaves_out_the_suite_s_own_stalls(
    suite: AgentSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cancel checks stop an agent whose cancel is overdue (the verdict is known);
    # time the suite itself was kept from running is not the agent's lateness.
    overdue = sys.modules[find_check("D8-agent-cancel-queued").__module__]._no_cancel_in_time
    conf = suite.context("D8-agent-cancel-queued")
    ticketed = time.time() - 10 * INTERVAL  # the ticket came long before the cancel is due
    ticket = McpCall(ticketed, ticketed, "POST", "tools/call", "run_graph_session", {}, 200, {})
    monkeypatch.setattr(
        conf, "calls", lambda tool=None: [] if tool == "cancel_graph_run" else [ticket]
    )
    try:
        assert overdue(conf)()  # the machine ran: the cancel is overdue
        suite.stalls.woke(ticketed, ticketed + 600.0)
        assert not overdue(conf)()  # the suite stalled throughout: not the agent's doing
    finally:
        suite.stalls._stalls.clear()
        conf.close()


def test_an_agent_inherits_no_credential_of_pytests_environment(
    suite: AgentSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest's own OSF_READ_TOKEN (a user's real token for the server suite) is not the
    # agent's; the contract's OSF_AGENT_TOKEN is the check's own.
    monkeypatch.setenv("OSF_READ_TOKEN", "tok_users_own_read_0123456789")
    monkeypatch.setenv("OSF_AGENT_TOKEN", "tok_users_own_agent_0123456789")
    script = (
        "import os; print('read', os.environ.get('OSF_READ_TOKEN'), "
        "'agent-is-check-s', os.environ.get('OSF_AGENT_TOKEN', '').startswith('osf_'))"
    )
    conf = suite.context("D7-agent-key-length", argv=[PY, "-c", script])
    try:
        outcome = conf.run(conf.run_task())
        assert "read None agent-is-check-s True" in outcome.output_tail, outcome.output_tail
    finally:
        conf.close()
