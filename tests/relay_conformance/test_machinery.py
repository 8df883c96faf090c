"""The relay suite's machinery: the driver API, the instrumented server, the relay
process, the preflight, flood detection and the plugin wiring."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.command import _process as command_process
from pytest_osfoundry.conformance.command._process import (
    CommandError,
    CommandProcess,
    CommandStarts,
)
from pytest_osfoundry.conformance.relay import RelaySuite, Timing, _harness
from pytest_osfoundry.conformance.relay import _driver as driver_module
from pytest_osfoundry.conformance.relay._driver import DriverApi
from pytest_osfoundry.conformance.relay._harness import relay_argv
from pytest_osfoundry.conformance.relay._instrumented import Fault, InstrumentedServer
from pytest_osfoundry.conformance.relay._preflight import RelayPreflightError, relay_preflight
from pytest_osfoundry.conformance.reporting._baseline import parse_baseline
from pytest_osfoundry.conformance.suite._checkids import (
    RENAMED_CHECKS,
    current_check_id,
    former_check_ids,
)
from pytest_osfoundry.conformance.suite._expect import CheckFailure
from pytest_osfoundry.conformance.suite._registry import all_checks, find_check
from pytest_osfoundry.http import DropConnection, Request
from pytest_osfoundry.server import ReferenceServer
from tests.sigint import with_default_sigint

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


# ---------------------------------------------------------------- the driver API
@pytest.fixture
def driver():
    api = DriverApi()
    return api, api.new_scenario()


def _post(api, key, path, body: bytes):
    return api(Request.build("POST", f"/s/{key}{path}", {}, body))


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"{not json", "the body must be JSON"),
        (b"[1]", "a JSON object"),
        (b'{"channel": "c", "graph_session_id": "g", "arguments": {}}', "command_id"),
        (b'{"command_id": "x", "graph_session_id": "g", "arguments": {}}', "channel"),
        (
            b'{"command_id": "x", "channel": "c", "graph_session_id": 3, "arguments": {}}',
            "graph_session_id",
        ),
        (b'{"command_id": "x", "channel": "c", "graph_session_id": "g"}', "arguments"),
    ],
)
def test_driver_answers_400_naming_the_bad_field(driver, body, named):
    api, scenario = driver
    reply = _post(api, scenario.key, "/runs", body)
    assert reply.status == 400
    assert named in reply.json()["error"]
    assert scenario.runs == []


def test_driver_records_runs_and_cancels_and_answers_the_plan(driver):
    api, scenario = driver
    body = json.dumps(
        {
            "command_id": "c1",
            "channel": "graph:external:c1",
            "graph_session_id": "g",
            "arguments": {"a": 1},
        }
    ).encode()
    plan = _post(api, scenario.key, "/runs", body).json()
    assert set(plan) == {"duration", "status", "result", "error", "total_tokens", "reported_cost"}
    assert scenario.runs[0].command_id == "c1" and scenario.runs[0].arguments == {"a": 1}
    assert _post(api, scenario.key, "/runs/c1/cancel", b"{}").json() == {"stop_after": 0.1}
    assert [c.command_id for c in scenario.cancels] == ["c1"]


def test_driver_refuses_bad_paths_methods_and_revisions(driver):
    api, scenario = driver
    assert api(Request.build("GET", "/s/nope/sharing")).status == 404
    assert api(Request.build("GET", f"/s/{scenario.key}/elsewhere")).status == 404
    assert api(Request.build("POST", f"/s/{scenario.key}/sharing")).status == 405
    bad = api(Request.build("GET", f"/s/{scenario.key}/sharing", query="after=soon"))
    assert bad.status == 400 and "after" in bad.json()["error"]


def test_driver_long_poll_answers_on_a_change_and_after_its_wait(driver, monkeypatch):
    api, scenario = driver
    revision = scenario.snapshot()["revision"]
    threading.Timer(0.2, lambda: scenario.set_projects([])).start()
    began = time.monotonic()
    reply = api(Request.build("GET", f"/s/{scenario.key}/sharing", query=f"after={revision}"))
    assert reply.json()["revision"] == revision + 1
    assert 0.1 < time.monotonic() - began < 5
    monkeypatch.setattr(driver_module, "LONG_POLL_SECONDS", 0.2)
    same = api(Request.build("GET", f"/s/{scenario.key}/sharing", query=f"after={revision + 1}"))
    assert same.json()["revision"] == revision + 1


def test_a_failing_driver_answers_503_then_recovers(driver):
    api, scenario = driver
    scenario.fail_next = 1
    assert api(Request.build("GET", f"/s/{scenario.key}/sharing")).status == 503
    assert api(Request.build("GET", f"/s/{scenario.key}/sharing")).status == 200


# ---------------------------------------------------------------- the instrumented server
def _instrumented():
    reference = ReferenceServer()
    server = InstrumentedServer(reference)
    prov = reference.provision()
    return server, server.lane(prov.desktop_token), prov


def _sync(server, prov):
    body = json.dumps({"project_id": prov.project_id, "sessions": []}).encode()
    headers = {"authorization": f"Bearer {prov.desktop_token}"}
    return server(Request.build("POST", "/external-assistants/graph-relays/sync", headers, body))


def test_instrumented_server_records_per_token_and_applies_faults_once():
    server, lane, prov = _instrumented()
    lane.add_fault(Fault("sync", "status", status=503))
    assert _sync(server, prov).status == 503
    assert _sync(server, prov).status == 200
    assert [(r.action, r.status) for r in lane.snapshot()] == [("sync", 503), ("sync", 200)]
    lane.add_fault(Fault("sync", "drop"))
    with pytest.raises(DropConnection):
        _sync(server, prov)
    assert lane.snapshot()[-1].status == 0
    injected = {"command_id": "not-a-uuid"}
    lane.add_fault(Fault("sync", "inject", commands=[injected]))
    assert _sync(server, prov).json()["commands"] == [injected]


def test_instrumented_server_keeps_requests_of_unknown_tokens_apart():
    server, lane, _ = _instrumented()
    headers = {"authorization": "Bearer not-a-token-of-anyone"}
    reply = server(Request.build("POST", "/external-assistants/graph-relays/sync", headers, b"{}"))
    assert reply.status == 401
    assert lane.snapshot() == [] and len(server.strangers) == 1


# ---------------------------------------------------------------- the relay process
def test_split_command():
    assert relay_argv("embedded") == [PY, "-m", "pytest_osfoundry.relay.driven"]
    assert relay_argv("node relay.js --x 'a b'") == ["node", "relay.js", "--x", "a b"]
    with pytest.raises(CommandError, match="the relay command cannot be split"):
        relay_argv("node 'unclosed")
    with pytest.raises(CommandError, match="the relay command is empty"):
        relay_argv("   ")


def test_a_missing_command_is_named():
    with pytest.raises(CommandError, match="not found: no-such-relay-command-xyz"):
        CommandProcess(["no-such-relay-command-xyz"], {}, what="the relay command")


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for whoever adopted it to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


_PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


@_PROC
def test_stop_kills_a_relay_ignoring_sigterm_and_its_children():
    script = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('ready', child.pid, file=sys.stderr, flush=True)\n"
        "time.sleep(60)\n"
    )
    process = CommandProcess([PY, "-c", script], {}, what="a command")
    deadline = time.monotonic() + 10
    while "ready" not in process.output_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    began = time.monotonic()
    status = process.stop(grace=0.5)
    assert status == -signal.SIGKILL
    assert time.monotonic() - began < 5
    child = int(process.output_tail().split()[-1])
    time.sleep(0.2)
    assert _dead(process.pid)
    assert _dead(child), "a child of the relay outlived it"


def test_a_checks_starts_keep_each_ones_stderr_and_close_together(monkeypatch):
    monkeypatch.setenv("OSF_X", "from pytest")  # left out: the starts unset it
    starts = CommandStarts(what="the agent command", secrets=["tok_secret"], unset=["OSF_X"])
    with pytest.raises(RuntimeError, match="the agent command was never started"):
        starts.stop()
    script = (
        "import os, sys; print(sys.argv[1], os.environ.get('OSF_X'), 'tok_secret', "
        "file=sys.stderr)"
    )
    first = starts.start([PY, "-c", script, "one"], {})
    first.popen.wait(10)
    second = starts.start([PY, "-c", script + "; import time; time.sleep(30)", "two"], {})
    assert starts.latest is second
    deadline = time.monotonic() + 10
    while "two" not in starts.output_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert starts.output_texts() == ["one None ***\n", "two None ***\n"]
    assert starts.stop() != 0  # the latest, stopped by SIGTERM
    starts.close()
    assert all(p.exited() is not None for p in starts.processes)


def test_stderr_tail_masks_the_token():
    token = "tok_" + "s3cr3t" * 5
    process = CommandProcess(
        [PY, "-c", f"import sys; print('token is {token}', file=sys.stderr)"],
        {},
        what="a command",
        secrets=[token],
    )
    process.popen.wait(10)
    tail = process.output_tail()
    process.close()
    assert "token is ***" in tail and token not in tail


def test_output_cut_in_the_middle_of_a_token_shows_none_of_it():
    """A token the command is still writing (or was killed writing) ends the output cut:
    its start is masked as the whole token is, in the tail and in the full text."""
    token = "tok_" + "s3cr3t" * 5
    half = token[:20]
    script = (
        f"import sys, time; sys.stderr.write('token is {half}'); sys.stderr.flush(); "
        "time.sleep(60)"
    )
    process = CommandProcess([PY, "-c", script], {}, what="a command", secrets=[token])
    try:
        deadline = time.monotonic() + 10
        while process.output_bytes < len("token is ") + len(half) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.output_tail() == "token is ***"
    finally:
        process.kill()
    assert process.output_text() == "token is ***"
    assert not process.shows_secret()  # a start is not the token shown


def test_a_relay_flooding_stderr_is_kept_bounded_and_its_stdout_dropped():
    """A relay's stderr is read through the bounded pipe an agent's output is (no file):
    the last OUTPUT_KEPT bytes kept, every byte counted; its stdout is not its contract."""
    script = (
        "import sys\n"
        "print('on stdout', flush=True)\n"
        "line = 'x' * 999 + '\\n'\n"
        "for _ in range(1024):\n"
        "    sys.stderr.write(line)\n"
        "sys.stderr.write('last line\\n')\n"
    )
    process = CommandProcess([PY, "-c", script], {}, what="a command")
    try:
        assert process.wait(10.0) == 0
        process.stop()  # its output read to the end
        assert process.output_bytes == 1024 * 1000 + len("last line\n")
        text = process.output_text()
        assert len(text) <= command_process.OUTPUT_KEPT < process.output_bytes
        assert text.endswith("x\nlast line\n") and "on stdout" not in text
        assert process.output_tail().splitlines()[-1] == "last line"
    finally:
        process.close()
    assert process.output_text() == ""  # closed: its output dropped


# ---------------------------------------------------------------- preflight and floods
@pytest.fixture
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _preflight(command: str, ready: float = 15.0) -> str:
    suite = RelaySuite(command)
    try:
        with pytest.raises(RelayPreflightError) as info:
            relay_preflight(suite, ready_seconds=ready)
    finally:
        suite.close()
    return str(info.value)


def test_preflight_names_a_command_not_found():
    assert "not found: no-such-relay-xyz" in _preflight("no-such-relay-xyz --flag")


def test_preflight_names_a_relay_that_exits_and_shows_its_stderr_masked():
    script = (
        "import os, sys; "
        "print('dying with', os.environ['OSF_DESKTOP_TOKEN'], file=sys.stderr); sys.exit(3)"
    )
    message = _preflight(f'{PY} -c "{script}"')
    assert message.startswith("the relay command exited (status 3) before its first sync")
    assert "dying with ***" in message


def test_a_relay_inherits_no_credential_of_pytests_environment(monkeypatch):
    """The suite's own credential variables (OSF_AGENT_TOKEN, ...) are not the relay's:
    it is handed its desktop token alone."""
    monkeypatch.setenv("OSF_AGENT_TOKEN", "tok_users_own_agent_0123456789")
    script = (
        "import os, sys; "
        "print('agent token', os.environ.get('OSF_AGENT_TOKEN'), file=sys.stderr); sys.exit(3)"
    )
    message = _preflight(f'{PY} -c "{script}"')
    assert "agent token None" in message


def test_preflight_names_a_relay_that_never_syncs():
    message = _preflight(f"{PY} -c 'import time; time.sleep(30)'", ready=1.0)
    assert message.startswith("the relay never synced within 1 s")


def test_preflight_names_a_wrong_token(in_root):
    message = _preflight(f"{PY} -m tests.relay_conformance.broken wrong-token")
    assert "token that is not OSF_DESKTOP_TOKEN" in message


def test_preflight_passes_the_embedded_relay():
    suite = RelaySuite("embedded")
    try:
        relay_preflight(suite)
    finally:
        suite.close()


def test_a_flooding_relay_fails_the_check_naming_its_rate(in_root):
    suite = RelaySuite(f"{PY} -m tests.relay_conformance.broken floods")
    conf = suite.context("D11-relay-cadence")
    try:
        with pytest.raises(CheckFailure, match=r"floods the server: \d+ relay requests a second"):
            find_check("D11-relay-cadence")(conf)
    finally:
        conf.close()
        suite.close()


def test_a_frozen_context_tells_of_what_its_relay_had_done_when_the_check_ended():
    """Its report is made while the relay still runs (or after its close): every part of
    it tells of the same requests and stderr."""
    suite = RelaySuite("embedded")
    conf = suite.context("D14-relay-channel")
    try:
        conf.share(1)
        conf.start()
        conf.freeze()
        seen, tail = conf.requests(), conf.stderr_tail()
        assert conf.lane.wait_for(lambda rs: len(rs) > len(seen), 10.0), "no later sync"
        assert (conf.requests(), conf.stderr_tail()) == (seen, tail)
        conf.close()
        assert (conf.requests(), conf.stderr_tail()) == (seen, tail)
    finally:
        conf.close()
        suite.close()


def test_a_relay_that_syncs_before_the_suite_runs_again_is_ready(monkeypatch):
    """Issue 43: on a loaded machine the suite's thread may get to run again after the
    spawn only once the relay's first sync has arrived. Readiness is judged on the
    server's record from the moment before the spawn, so that sync counts (it counted
    for nothing when the window began after the spawn: "waited 15 s ... in vain" with
    a sync recorded at 0.000 s). The real-time cadence makes it the only sync."""
    monkeypatch.setattr(_harness, "READY_SECONDS", 3.0)
    suite = RelaySuite("embedded")
    conf = suite.context("D11-relay-realtime-cadence", timing=Timing(30.0, 0.15))

    class Descheduled(CommandProcess):
        """The suite's thread, kept from running from the spawn until the first sync."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            assert conf.lane.wait_for(lambda rs: any(r.action == "sync" for r in rs), 20.0)
            time.sleep(0.01)

    monkeypatch.setattr(command_process, "CommandProcess", Descheduled)
    try:
        conf.share(1)
        conf.start()
        syncs = conf.requests("sync")
        assert len(syncs) == 1 and syncs[0].at >= conf.started_at
    finally:
        conf.close()
        suite.close()


# ---------------------------------------------------------------- the plugin
def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_plugin_runs_the_relay_suite_and_writes_the_reports(tmp_path):
    report = tmp_path / "relay.json"
    junit = tmp_path / "relay.xml"
    run = _pytest(
        "--osf-relay-command=embedded",
        "-k",
        "D14-relay-channel or D15-relay-non-uuid",
        f"--osf-report={report}",
        f"--junitxml={junit}",
        "--osf-markdown",
        str(tmp_path / "r.md"),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "osfoundry relay suite: relay command 'embedded'" in run.stdout
    document = json.loads(report.read_text())
    outcomes = {c["id"]: c["outcome"] for c in document["checks"]}
    assert outcomes == {"D14-relay-channel": "passed", "D15-relay-non-uuid": "passed"}
    assert "D14-relay-channel" in junit.read_text()
    assert "D15-relay-non-uuid" in (tmp_path / "r.md").read_text()


def test_plugin_preflight_failure_is_one_error_line_and_exit_4(tmp_path):
    run = _pytest(
        "--osf-relay-command=no-such-relay-xyz",
        f"--osf-report={tmp_path / 'r.json'}",
        f"--osf-markdown={tmp_path / 'r.md'}",
        f"--junitxml={tmp_path / 'r.xml'}",
        cwd=tmp_path,
    )
    assert run.returncode == 4
    errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR:")]
    assert errors == [
        "ERROR: osfoundry relay preflight: the relay command was not found: no-such-relay-xyz"
    ]
    # Every report asked for is written all the same: not ok, every relay check not run.
    report = json.loads((tmp_path / "r.json").read_text())
    summary = report["summary"]
    assert summary["ok"] is False and report["exit_status"] == 4
    assert summary["stopped"].startswith("the relay preflight refused the relay command: ")
    relay_checks = [c for c in report["checks"] if c["area"] == "relay"]
    assert relay_checks and len(relay_checks) == len(report["checks"]) == summary["not_run"]
    assert "❌ not ok (exit status 4)" in (tmp_path / "r.md").read_text()
    assert "D14-relay-channel" in (tmp_path / "r.xml").read_text()


def _running_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and b"pytest_osfoundry.relay.driven" in cmdline:
                found.append(int(entry.name))
    return found


@_PROC
def test_ctrl_c_leaves_no_relay_process(tmp_path):
    marker = f"osf-orphan-probe-{os.getpid()}-{time.monotonic_ns()}"
    command = f"{PY} -m pytest_osfoundry.relay.driven {marker}"
    log = tmp_path / "run.log"
    with log.open("w") as out:
        run = subprocess.Popen(
            with_default_sigint(
                [
                    PY,
                    "-m",
                    "pytest",
                    "-p",
                    "no:randomly",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    f"--osf-relay-command={command}",
                    f"--osf-report={tmp_path / 'r.json'}",
                ]
            ),
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while len(_running_with(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _running_with(marker), "the relay suite started no relay"
        run.send_signal(signal.SIGINT)
        run.wait(90)
    deadline = time.monotonic() + 5  # a relay killed a moment ago may still be exiting
    alive = [pid for pid in _running_with(marker) if not _dead(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in _running_with(marker) if not _dead(pid)]
    assert alive == [], f"relay processes left after Ctrl-C: {alive}\n{log.read_text()[-3000:]}"
    assert run.returncode == 2, log.read_text()[-3000:]
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]  # written all the same
    assert summary["ok"] is False and "Ctrl-C" in summary["stopped"], summary
    assert summary["not_run"] > 0


def test_plugin_refuses_a_command_that_cannot_be_split(tmp_path):
    run = _pytest("--osf-relay-command=node 'unclosed", cwd=tmp_path)
    assert run.returncode == 4
    assert "--osf-relay-command: the relay command cannot be split" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_passing_relay_check_listed_in_a_baseline_is_a_stale_entry(tmp_path):
    """Also under the id it had before (R9-relay-lost-start is R14-relay-lost-start now):
    ``-k`` selects it and the baseline entry names it."""
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("D14-relay-channel\nR9-relay-lost-start\n", encoding="utf-8")
    report = tmp_path / "relay.json"
    run = _pytest(
        "--osf-relay-command=embedded",
        "-k",
        "D14-relay-channel or R9-relay-lost-start",
        f"--osf-baseline={baseline}",
        f"--osf-report={report}",
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "stale baseline entries" in run.stdout
    outcomes = {c["id"]: c["outcome"] for c in json.loads(report.read_text())["checks"]}
    assert outcomes == {"D14-relay-channel": "xpassed", "R14-relay-lost-start": "xpassed"}


def test_a_renamed_check_keeps_its_old_id_in_baselines():
    assert parse_baseline("R9-relay-lost-start  # ours\nR14-relay-lost-start\n").ids == (
        "R14-relay-lost-start",
    )
    assert former_check_ids("R14-relay-lost-start") == ("R9-relay-lost-start",)
    assert current_check_id("D14-relay-channel") == "D14-relay-channel"
    known = {c.check_id for c in all_checks(include_relay=True)}
    assert set(RENAMED_CHECKS.values()) <= known and not set(RENAMED_CHECKS) & known


def test_the_relay_face_gives_and_lists_its_public_names():
    import pytest_osfoundry.conformance.relay as face

    assert face.RelayConformance is _harness.RelayConformance
    assert set(face.__all__) <= set(dir(face))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = face.nothing


def test_a_preflight_refusal_shows_no_credential_of_the_run(tmp_path):
    """A relay given one of the run's credentials on its command line prints it and
    exits: the refusal (terminal, JSON) shows it masked."""
    secret = "tok_users_read_token_0123456789abcdef"
    command = f"{PY} -c 'import sys; print(sys.argv[1], file=sys.stderr); sys.exit(3)' {secret}"
    report = tmp_path / "r.json"
    done = subprocess.run(
        [PY, "-m", "pytest", "-p", "no:cacheprovider", f"--osf-relay-command={command}",
         f"--osf-read-token={secret}", f"--osf-report={report}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "preflight" in done.stdout + done.stderr
    for text in (done.stdout, done.stderr, report.read_text(encoding="utf-8")):
        assert secret not in text and secret[:12] not in text


def test_instrumented_server_reads_a_body_as_the_server_does():
    # A body nested too deep is the server's 400, not a RecursionError in the recording;
    # a NaN the server refuses is recorded as no body (it would make a record invalid JSON).
    server, lane, prov = _instrumented()
    headers = {"authorization": f"Bearer {prov.desktop_token}"}
    path = "/external-assistants/graph-relays/sync"
    assert server(Request.build("POST", path, headers, b"[" * 100_000)).status == 400
    nan = b'{"project_id": NaN, "sessions": []}'
    assert server(Request.build("POST", path, headers, nan)).status == 400
    assert [(r.action, r.status, r.body) for r in lane.snapshot()] == [
        ("sync", 400, None),
        ("sync", 400, None),
    ]
