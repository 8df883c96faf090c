"""A failed relay check's report shows what its relay sent (``conformance/_relay_evidence.py``):
the JSON report's ``relay`` entry, a section of pytest's failure report, and a
``requests`` count, whether the check ran in pytest's call or was pre-run by the
concurrent runner (whose contexts are closed before the report is made)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAUGHT = "D18-relay-bound-japanese"  # the bytes-counting relay fails it (broken.CAUGHT_BY)
PASSED = "D14-relay-channel"  # and passes this one (test_broken_relays.UNAFFECTED)


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_a_failed_relay_check_reports_the_requests_its_relay_sent(
    tmp_path: Path, concurrency: str
) -> None:
    report = tmp_path / "relay.json"
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
