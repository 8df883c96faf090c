"""The agent suite's tiers and its opt-in restart check, without minutes of real time.

``--osf-agent-realtime`` is the production rhythm: the tickets say 20 s, and the agent's
environment has no ``OSF_AGENT_PICKUP_INTERVAL`` (not even from pytest's own), but
still its ``OSF_AGENT_DEADLINE``; it conflicts with ``--osf-agent-interval``. The kit's
agent takes its cadence from the ticket when the variable is absent. The real-time
checks themselves are not run here (benchmarks/bench_agent_suite.py --realtime times
them); ``R5-agent-resumes-after-restart`` is collected only with
``--osf-agent-restart``, and resumes from the state folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osfoundry.agent._contract import STATE_FILE, ContractAgent, SavedRuns
from pytest_osfoundry.client import HttpTransport, McpClient
from pytest_osfoundry.conformance.agent import AgentSuite
from pytest_osfoundry.conformance.agent._harness import (
    CONTRACT,
    TIMING_VARIABLES,
    default_concurrency,
)
from pytest_osfoundry.conformance.reporting._outcome import planned_checks
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.conformance.suite._registry import find_check

PY = sys.executable
RESTART = "R5-agent-resumes-after-restart"


@pytest.fixture(scope="module")
def realtime() -> Iterator[AgentSuite]:
    made = AgentSuite("embedded", realtime=True)
    yield made
    made.close()


def test_realtime_is_the_production_rhythm(realtime: AgentSuite) -> None:
    assert realtime.interval == 20
    assert default_concurrency(True) >= 16 > default_concurrency(False)  # every check at once
    conf = realtime.context("A1-first-look")
    try:
        conf.ready()  # the desktop shares its sessions
        transport = HttpTransport(timeout=10.0)
        try:
            client = McpClient(transport, realtime.mcp_url, conf.token)
            ticket = client.run_graph_session(conf.session()["graph_session_id"], "k" * 16)
        finally:
            transport.close()
        assert ticket["poll_after_seconds"] == 20
        env = conf.env(conf.run_task(), "/tmp/r.json", conf.deadline())
        assert sorted(env) == sorted(set(CONTRACT) - set(TIMING_VARIABLES))
        assert "OSF_AGENT_PICKUP_INTERVAL" not in env
        assert env["OSF_AGENT_DEADLINE"] == "405"  # the task's limit stays: 20 I + 5 s
    finally:
        conf.close()
    with pytest.raises(ValueError, match="production 20 s"):
        AgentSuite("embedded", realtime=True, interval=2)


def test_no_pickup_interval_leaks_in_from_pytests_environment(
    realtime: AgentSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSF_AGENT_PICKUP_INTERVAL", "2")
    conf = realtime.context("D7-agent-key-length")
    conf.argv = [PY, "-c", "import os; print(sorted(k for k in os.environ if 'OSF_AGENT' in k))"]
    try:
        outcome = conf.run(conf.run_task())
    finally:
        conf.close()
    printed = outcome.output_tail
    assert "OSF_AGENT_DEADLINE" in printed and "OSF_AGENT_TASK" in printed
    assert "OSF_AGENT_PICKUP_INTERVAL" not in printed


def test_the_kit_agent_takes_its_cadence_from_the_ticket() -> None:
    """The real-time tier's environment at a short interval: without the variable the
    kit's agent polls at the ticket's poll_after_seconds (it used to refuse to start)."""
    suite = AgentSuite("embedded", interval=0.5)
    suite.realtime = True  # the real-time tier's environment, on a half-second rhythm
    conf = suite.context("A1-first-look")
    try:
        find_check("A1-first-look")(conf)
        assert "OSF_AGENT_PICKUP_INTERVAL" not in conf.env(conf.run_task(), "r", 1.0)
        assert 0.75 <= conf.measures["first_look_intervals"] <= 2
    finally:
        conf.close()
        suite.close()


def test_before_a_ticket_the_kit_agent_assumes_the_production_interval(tmp_path: Path) -> None:
    env = {
        "OSF_AGENT_MCP_URL": "http://127.0.0.1:9/mcp",
        "OSF_AGENT_TOKEN": "t",
        "OSF_AGENT_PROJECT_ID": "p",
        "OSF_AGENT_TASK": json.dumps({"kind": "run", "graph_session_id": "gs_1"}),
        "OSF_AGENT_DEADLINE": "30",
        "OSF_AGENT_REPORT": str(tmp_path / "r.json"),
    }
    agent = ContractAgent(env)
    assert agent.interval == 20
    agent.ticket_came("k" * 16, {"command_id": "c1", "poll_after_seconds": 0.5})
    assert agent.agent.strategy(0, 0.0) == agent.agent.strategy(3, 2.0) == 0.5
    agent.transport.close()


def test_saved_runs_survive_a_restart_and_are_replaced_whole(tmp_path: Path) -> None:
    task = {"kind": "run", "graph_session_id": "gs_1", "arguments": {"a": 1}}
    saved = SavedRuns(str(tmp_path), task)
    saved.save_key(0, "k" * 16)
    assert SavedRuns(str(tmp_path), task).slot(0) == {"key": "k" * 16, "command_id": None}
    saved.save_command("k" * 16, "c1")
    again = SavedRuns(str(tmp_path), task)
    assert again.slot(0) == {"key": "k" * 16, "command_id": "c1"}
    assert SavedRuns(str(tmp_path), {**task, "arguments": {"a": 2}}).slot(0) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [STATE_FILE]  # no .part left
    (tmp_path / STATE_FILE).write_text("{not json")
    assert SavedRuns(str(tmp_path), task).slot(0) is None
    again.forget()
    assert not (tmp_path / STATE_FILE).exists()


def test_the_conflict_and_the_opt_in_in_the_settings() -> None:
    with pytest.raises(pytest.UsageError, match="leave out --osf-agent-interval"):
        Settings.from_values({"osf_agent_realtime": True, "osf_agent_interval": "5"}, {})
    with pytest.raises(pytest.UsageError, match="--osf-agent-realtime"):
        Settings.from_values({}, {"OSF_AGENT_REALTIME": "1", "OSF_AGENT_INTERVAL": "5"})
    plain = Settings.from_values({"osf_agent_command": "embedded"}, {})
    assert plain.osf_agent_interval is None and plain.osf_agent_concurrency is None
    assert RESTART not in {c.check_id for c in planned_checks(plain)}
    opted = Settings.from_values({"osf_agent_command": "embedded", "osf_agent_restart": True}, {})
    assert RESTART in {c.check_id for c in planned_checks(opted)}


def _pytest(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PY, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_options_on_the_command_line(tmp_path: Path) -> None:
    """Collected only (no check runs): the header names the tier, R5 comes with its
    option (without it, it is deselected: test_agent_plugin.py's embedded run), and the
    conflict is one error line with exit 4."""
    both = ("--osf-agent-command=embedded", "--osf-agent-realtime")
    started = {
        "options": _pytest(*both, "--osf-agent-restart", "--collect-only", cwd=tmp_path),
        "conflict": _pytest(*both, "--osf-agent-interval=5", cwd=tmp_path),
    }
    ran = {name: (p, *p.communicate(timeout=120)) for name, p in started.items()}
    process, out, err = ran["options"]
    assert process.returncode == 0, out[-2000:] + err[-2000:]
    assert "real-time tier, pickup interval 20 s, no timing variables, restart check on" in out
    assert RESTART in out and "deselected" not in out
    process, out, err = ran["conflict"]
    assert process.returncode == 4, out[-2000:] + err[-2000:]
    errors = [line for line in err.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "leave out --osf-agent-interval" in errors[0], err
