"""osfoundry-load end to end: Locust in subprocesses, loopback only, a few seconds each.

* ``serve --accounts`` as the target of 1 master + 2 workers: the accounting is green,
  and a run an earlier load left queued is run by a desktop but not counted.
* Two broken variants of the reference server (``variants.py``), each run short in one
  process: idempotency ignored (duplicates named) and a share of completions lost
  (the lost runs named).

A run the load generator could not keep up with (this machine shared and loaded: the
accounting says "not valid") proves nothing either way: such a test skips, naming why.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import HttpTransport, McpClient, RelayClient
from pytest_osfoundry.load import read_target
from pytest_osfoundry.load._ledger import tag
from pytest_osfoundry.load._preflight import desktop_sessions
from tests.load._runs import LoadRun, load_command, run_load, serve
from tests.load.variants import LosesCompletions, serving

ACCOUNTS = 3
AGENTS = 2


#: How the accounting says the load generator fell behind (its pace, nothing else): it
#: warned of its CPU, its timers ran late, or it queued nothing within the run time
#: (each variant queues runs as the reference server does).
PACE = ("Locust warned that", "the load generator's timers ran", "no agent queued a run")


def _judged(run: LoadRun) -> dict[str, Any]:
    """The accounting; a skip when the load generator alone could not keep up.

    Only a "not valid" verdict skips: a duplicate or a double execution is red
    whatever the generator's pace, and a test expecting red must see it.
    """
    assert run.report is not None, f"no accounting written:\n{run.stdout}\n{run.stderr}"
    reasons = run.report["not_valid"]
    if run.report["verdict"] == "not valid" and all(r.startswith(PACE) for r in reasons):
        pytest.skip(f"the load generator could not keep up on this machine: {reasons}")
    return run.report


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    """``osfoundry-fake serve --accounts 3 --agents-per-account 2``; its line and file."""
    with serve(tmp_path_factory.mktemp("serve"), accounts=ACCOUNTS, agents=AGENTS) as made:
        yield made


def test_serve_accounts_writes_a_private_file_and_prints_no_token(served) -> None:
    line, accounts = served
    assert line["accounts_file"] == str(accounts.resolve())
    assert line["accounts"] == ACCOUNTS
    assert stat.S_IMODE(os.stat(accounts).st_mode) == 0o600
    target = read_target(accounts)
    assert len(target.accounts) == ACCOUNTS
    assert target.mcp_url == line["mcp_url"]
    for acc in target.accounts:
        assert len(acc.agent_tokens) == AGENTS
        for token in (acc.desktop_token, *acc.agent_tokens):
            assert token not in json.dumps(line)


def _queue_an_earlier_loads_run(accounts: Path) -> str:
    """Queue a run on account 0 as an earlier load left it (its arguments name another
    load run); its command id."""
    target = read_target(accounts)
    acc = target.accounts[0]
    with HttpTransport(timeout=10.0, max_bytes=1 << 20) as wire:
        sessions = desktop_sessions(0)
        RelayClient(wire, target.relay_url, acc.desktop_token).sync(acc.project_id, sessions)
        ticket = McpClient(wire, target.mcp_url, acc.agent_tokens[0]).run_graph_session(
            sessions[0]["graph_session_id"], "earlier-key", tag("0.0", "earlier-key", "earlier")
        )
    return str(ticket["command_id"])


def test_master_and_two_workers_against_serve_are_green(served, tmp_path: Path) -> None:
    _, accounts = served
    earlier = _queue_an_earlier_loads_run(accounts)
    run = run_load(tmp_path, accounts, run_time="10s", workers=2, extra=("--drain", "100"))
    report = _judged(run)
    assert report["foreign"] == 1  # the earlier load's run: run by a desktop, not counted
    assert earlier not in run.stdout
    assert run.status == 0, run.stdout + run.stderr
    assert report["verdict"] == "green"
    assert report["runs"] > 0
    assert report["lost"] == report["duplicated"] == report["ran_twice"] == []
    assert report["processes"] == 2  # each worker's ledger arrived before the master ended
    names = {row["name"] for row in report["latency"]}
    assert {"MCP run_graph_session", "MCP get_graph_run", "relay sync", "relay start",
            "relay complete"} <= names
    assert "verdict                    green" in run.stdout


def test_a_server_ignoring_idempotency_keys_is_red_naming_the_duplicates(tmp_path: Path) -> None:
    accounts = tmp_path / "accounts.json"
    with serving("ignores-keys", accounts, accounts=ACCOUNTS, agents=AGENTS):
        run = run_load(tmp_path, accounts, run_time="8s",
                       extra=("--lost-replies", "0.5", "--drain", "60"))
    report = _judged(run)
    assert run.status == 1, run.stdout + run.stderr
    assert report["verdict"] == "red"
    assert report["duplicated"]
    for dup in report["duplicated"]:
        assert len(dup["command_ids"]) >= 2
    first = report["duplicated"][0]
    assert f"duplicated: agent {first['agent']} key {first['key']}: " in run.stdout


def test_a_server_losing_completions_is_red_naming_the_lost_runs(tmp_path: Path) -> None:
    accounts = tmp_path / "accounts.json"
    with serving("loses-completions", accounts, accounts=ACCOUNTS, agents=AGENTS) as handler:
        run = run_load(tmp_path, accounts, run_time="8s",
                       extra=("--lost-replies", "0", "--drain", "20"))
    assert isinstance(handler, LosesCompletions)
    report = _judged(run)
    assert run.status == 1, run.stdout + run.stderr
    assert report["verdict"] == "red"
    lost = {r["command_id"] for r in report["lost"]}
    assert handler.dropped, "the variant dropped no completion: the run was too short"
    assert set(handler.dropped) <= lost
    assert f"lost: {sorted(handler.dropped)[0]}" in run.stdout or len(lost) > 10


def test_help_lists_the_loads_options_beside_locusts() -> None:
    done = subprocess.run(load_command("--help"), capture_output=True, timeout=60, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    for option in ("--target", "--time-scale", "--desktops", "--agents", "--drain",
                   "--report-json", "--lost-replies", "--master", "--worker"):
        assert option in out


def test_a_run_that_stops_before_its_accounting_leaves_no_older_report(
    tmp_path: Path,
) -> None:
    """Reports an earlier run left at the paths are removed before this run can stop:
    a bad accounts file (exit 2) leaves no green verdict to be read as this run's."""
    json_report, md_report = tmp_path / "accounting.json", tmp_path / "accounting.md"
    json_report.write_text('{"verdict": "green", "exit_status": 0}\n', encoding="utf-8")
    md_report.write_text("# osfoundry-load accounting\n\n| verdict | green |\n",
                         encoding="utf-8")
    done = subprocess.run(
        load_command("--headless", "--only-summary", "-t", "5s",
                     "--target", str(tmp_path / "no-such-accounts.json"),
                     "--report-json", str(json_report), "--report-md", str(md_report)),
        capture_output=True, timeout=60, check=False,
    )
    assert done.returncode == 2, done.stderr.decode()
    assert "no-such-accounts.json" in done.stderr.decode()
    assert not json_report.exists() and not md_report.exists()
