"""The load's verdicts on runs that must not pass, as real loads (subprocesses) on loopback.

* **Preflight**: a wrong path, a wrong token: exit status 2 within seconds, the
  cause named, no token printed, no user started (a port that refuses, each
  credential's case: in-process, ``test_preflight.py``).
* **Interrupts**: SIGINT once the users run, then again during the drain: "not valid:
  interrupted at N s of 30 s", the drain cut short, the table and the report still
  written, no traceback; SIGTERM on the master of a distributed run: the same verdict.
* **Half-refused, then gone**: a server that refuses one desktop token and one agent
  token after the preflight, then stops answering: red, naming each refused
  credential and when the server stopped answering; the agent that never saw its
  sessions is stopped without an error logged.

Each is a few seconds long: small accounts, a short ``-t``, the tests' time scale.
"""

from __future__ import annotations

import copy
import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.load import read_target
from tests.load._runs import LoadRun, load_command, serve, start_load
from tests.load.variants import RevokesThenDies, serving

ACCOUNTS = 3
AGENTS = 2
#: What the load says once it runs: its own line, or Locust's (which may come late or
#: not at all on a busy machine's distributed run).
STARTED = ("osfoundry-load: the load started", "All users spawned")
#: Seconds a preflight's failure may take, process start included (a loaded machine's).
PREFLIGHT_LIMIT = 60.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    with serve(tmp_path_factory.mktemp("serve"), accounts=ACCOUNTS, agents=AGENTS) as made:
        yield made


def _tokens(accounts: Path) -> list[str]:
    target = read_target(accounts)
    return [t for a in target.accounts for t in (a.desktop_token, *a.agent_tokens)]


def _no_token_in(run: LoadRun, accounts: Path) -> None:
    text = run.stdout + run.stderr + json.dumps(run.report)
    for token in _tokens(accounts):
        assert token not in text


def test_the_preflight_names_a_wrong_url_path_or_token_and_exits_2(
    served: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    _, accounts = served
    good = json.loads(accounts.read_text())
    port = good["mcp_url"].rsplit(":", 1)[1].split("/", 1)[0]
    cases: dict[str, tuple[Any, str]] = {
        "path": (lambda d: d.update(mcp_url=d["mcp_url"] + "-nowhere"),
                 f"the mcp_url (http://127.0.0.1:{port}/mcp-nowhere) answered 404 (not found)"),
        "desktop": (lambda d: d["accounts"][1].update(desktop_token="osf_not-a-token-at-all"),
                    "account 1's desktop token refused (401) by the relay sync"),
    }
    started: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    for name, (change, _) in cases.items():
        data = copy.deepcopy(good)
        change(data)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        # -t 60s: a run the preflight did not stop would take a minute.
        started[name] = (subprocess.Popen(
            load_command("--headless", "--only-summary", "-t", "60s", "--target", str(path),
                         "--report-json", str(tmp_path / f"{name}-report.json")),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE), time.monotonic())
    for name, (proc, began) in started.items():
        out, err = proc.communicate(timeout=PREFLIGHT_LIMIT)
        took = time.monotonic() - began
        text = out.decode() + err.decode()
        assert proc.returncode == 2, (name, text)
        assert "osfoundry-load: preflight: " in text, (name, text)
        assert cases[name][1] in text, (name, text)
        assert took < PREFLIGHT_LIMIT
        assert "Traceback" not in text
        assert not (tmp_path / f"{name}-report.json").exists()  # no load ran
        for token in _tokens(accounts):
            assert token not in text


def _interrupted(run: LoadRun, of: str) -> dict[str, Any]:
    assert run.report is not None, run.stdout + run.stderr
    report = run.report
    assert run.status == 3, run.stdout + run.stderr
    assert report["verdict"] == "not valid"
    assert report["summary"].startswith("not valid: interrupted at ")
    assert report["summary"].endswith(f" s of {of} s")
    assert report["interrupted"]["of"] == float(of)
    assert re.search(rf"^  verdict +{re.escape(report['summary'])}$", run.stdout, re.M)
    assert "Traceback" not in run.stderr and "KeyboardInterrupt" not in run.stderr
    return report


def test_an_interrupted_run_is_not_valid_and_a_second_interrupt_ends_the_drain(
    served: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    _, accounts = served
    # Graphs of a median 40 s (8 s here): the drain would wait for them.
    running = start_load(tmp_path, accounts, run_time="30s",
                         extra=("--graph-median", "40", "--loglevel", "INFO"))
    running.wait_for(*STARTED)
    running.proc.send_signal(signal.SIGINT)
    running.wait_for("interrupted at")
    running.proc.send_signal(signal.SIGINT)
    run = running.finish()
    report = _interrupted(run, "30")
    assert report["interrupted"]["drain_cut_at"] is not None
    assert any(r.startswith("the drain was cut short by an interrupt at ")
               for r in report["not_valid"])
    _no_token_in(run, accounts)


def test_sigterm_on_the_master_of_a_distributed_run_is_not_valid(
    served: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    _, accounts = served
    running = start_load(tmp_path, accounts, run_time="30s", workers=1,
                         extra=("--drain", "5", "--loglevel", "INFO"))
    running.wait_for(*STARTED)
    running.proc.send_signal(signal.SIGTERM)
    run = running.finish()
    report = _interrupted(run, "30")
    assert report["processes"] == 1  # the worker's ledger still arrived


def test_refused_tokens_and_a_server_that_stops_answering_are_red(tmp_path: Path) -> None:
    accounts = tmp_path / "accounts.json"
    with serving("revokes-then-dies", accounts, accounts=ACCOUNTS, agents=AGENTS) as handler:
        assert isinstance(handler, RevokesThenDies)
        # A pass every 2 s: desktop 0's first falls within 2 s of the start, refused.
        running = start_load(tmp_path, accounts, run_time="4s",
                             extra=("--time-scale", "0.1", "--drain", "5"))
        run = running.finish()
    assert len(handler.refused) == 2, (
        f"the server never refused both tokens: the run was short\n{run.stdout}\n{run.stderr}")
    report = run.report
    assert report is not None, run.stdout + run.stderr
    assert run.status == 1, run.stdout + run.stderr
    assert report["verdict"] == "red"
    refused = {(r["account"], r["credential"], r["status"]) for r in report["refused"]}
    assert refused == {(0, "desktop token", 401), (1, "agent token 0", 401)}
    by = {(r["account"], r["credential"]): r for r in report["refused"]}
    assert set(by[(0, "desktop token")]["requests"]) == {"relay sync"}
    assert set(by[(1, "agent token 0")]["requests"]) == {"MCP list_graph_sessions"}
    gone = [f for f in report["failures"] if f.startswith("the server stopped answering at ")]
    assert gone, report["failures"]
    assert re.search(rf"^  red +{re.escape(gone[0])}$", run.stdout, re.M)
    assert re.search(r"^  red +account 0's desktop token refused \(401\), ", run.stdout, re.M)
    # Account 1's first agent never saw its sessions listed: stopped at the end, no error.
    assert "StopUser" not in run.stderr and "Traceback" not in run.stderr
    _no_token_in(run, accounts)
