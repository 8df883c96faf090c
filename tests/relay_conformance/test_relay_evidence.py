"""A failed relay check's report shows what its relay sent (``conformance/relay/_evidence.py``):
the JSON report's ``relay`` entry, sections of pytest's failure report (the requests, and
the relay's stderr lines naming the check's commands), and a ``requests`` count, whether
the check ran in pytest's call or was pre-run by the concurrent runner (whose contexts
are closed before the report is made). ``--osf-relay-record`` keeps every check's whole
record, passed ones too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.plugin._command_suite import record_folder
from pytest_osfoundry.conformance.relay._evidence import EXCERPT_LINES, LINE_CHARS, stderr_about

ROOT = Path(__file__).resolve().parents[2]
CAUGHT = "D18-relay-bound-japanese"  # the bytes-counting relay fails it (broken.CAUGHT_BY)
PASSED = "D14-relay-channel"  # and passes this one (test_broken_relays.UNAFFECTED)


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_a_failed_relay_check_reports_the_requests_its_relay_sent(
    tmp_path: Path, concurrency: str
) -> None:
    report = tmp_path / "relay.json"
    records = tmp_path / "records"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--osf-relay-command={sys.executable} -m tests.relay_conformance.broken bytes",
            f"--osf-relay-concurrency={concurrency}",
            "-k",
            f"{CAUGHT} or {PASSED}",
            f"--osf-report={report}",
            f"--osf-relay-record={records}",
        ],
        cwd=ROOT,  # the relay command imports tests.relay_conformance
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    checks = {c["id"]: c for c in json.loads(report.read_text(encoding="utf-8"))["checks"]}
    failed, passed = checks[CAUGHT], checks[PASSED]
    assert (failed["outcome"], passed["outcome"]) == ("failed", "passed")

    evidence = failed["relay"]
    assert evidence is not None and passed["relay"] is None
    entries = evidence["requests"]
    assert 0 < len(entries) <= 20 and evidence["total"] >= len(entries)
    assert failed["requests"] == evidence["total"] and passed["requests"] > 0
    assert {e["action"] for e in entries} >= {"sync", "complete"}, entries
    assert entries == sorted(entries, key=lambda e: e["at"]) and entries[0]["at"] >= 0
    assert all(len(e["body"]) <= 200 for e in entries)
    assert isinstance(evidence["stderr_tail"], str)
    assert failed["exchange"] is None  # the server suite's replay does not apply

    assert "osfoundry: what the relay sent" in run.stdout
    assert " complete " in run.stdout and "-> HTTP " in run.stdout

    # The relay's stderr about the failing command: its lines naming it, not the idle tail.
    about = evidence["stderr_about_commands"]
    truncated = next(e["command_id"] for e in entries if "result_truncated" in e["body"])
    # (logged before its completion's POST: "delivered" may come after the check ended)
    assert f"finished {truncated} completed" in about, about
    assert "osfoundry: the relay's stderr" in run.stdout and truncated in run.stdout

    # The record of each check, passed or failed: every request whole, measured.
    kept = {path.name: json.loads(path.read_text(encoding="ascii")) for path in records.iterdir()}
    assert set(kept) == {f"{CAUGHT}.json", f"{PASSED}.json"}
    caught, clean = kept[f"{CAUGHT}.json"], kept[f"{PASSED}.json"]
    assert (caught["outcome"], clean["outcome"], clean["message"]) == ("failed", "passed", None)
    assert caught["message"].startswith("japanese: with the whole result the completion would")
    assert len(caught["requests"]) == evidence["total"] and len(clean["requests"]) > 0
    assert caught["notes"] and "would be 100,000 UTF-16 units" in caught["notes"][0]
    posted = next(
        r for r in caught["requests"] if r["command_id"] == truncated and r["action"] == "complete"
    )
    assert posted["units"] < 1_000 and posted["body"]["result_truncated"] is True
    assert truncated in caught["commands"] and caught["driver"]["runs"]
    assert all(r["units"] is not None for r in caught["requests"] if r["action"] == "complete")


def test_stderr_about_names_the_commands_with_a_window_around_each() -> None:
    first = "\n".join(
        [
            "start",
            "idle 1",
            "idle 2",
            "before",
            "started cmd-a",
            "after",
            *[f"idle {i}" for i in range(3, 9)],
            "finished cmd-a",
            "tail",
        ]
    )
    second = "restarted\ndelivered cmd-a\nidle"
    about = stderr_about([first, second], ["cmd-a", "cmd-a", ""])
    assert about.splitlines() == [
        "[relay start 1 of 2]",
        "idle 2",
        "before",
        "started cmd-a",
        "after",
        "idle 3",
        "...",
        "idle 7",
        "idle 8",
        "finished cmd-a",
        "tail",
        "[relay start 2 of 2]",
        "restarted",
        "delivered cmd-a",
        "idle",
    ]
    assert stderr_about([first], ["cmd-b"]) == "" and stderr_about([first], []) == ""


def test_stderr_about_is_bounded_and_printable() -> None:
    text = "\n".join(f"poll cmd-a {i} " + "x" * 400 for i in range(500)) + "\nhalf \ud83d cmd-a"
    lines = stderr_about([text], ["cmd-a"]).splitlines()
    assert len(lines) == EXCERPT_LINES + 1 and "lines left out" in lines[EXCERPT_LINES // 3]
    assert max(len(line) for line in lines) <= LINE_CHARS
    assert lines[-1] == "half \\ud83d cmd-a"  # a lone surrogate, written as its escape
    assert lines[0].startswith("poll cmd-a 0 ")


def test_the_record_folder_must_be_a_folder_one_can_write_in(tmp_path: Path) -> None:
    made = record_folder("--osf-relay-record", str(tmp_path / "new" / "records"))
    assert made.is_dir()
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(pytest.UsageError, match="a-file is a file; name a folder"):
        record_folder("--osf-relay-record", str(file))
