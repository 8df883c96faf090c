"""Teeth: every broken relay fails exactly the relay checks meant for it; legal
variations pass.

One relay suite (instrumented server and driver on loopback) serves every pair of
(relay, check) at once in a thread pool, so the whole table costs about as much as
its slowest pairs. Each broken relay is run against the checks that must catch it
and one that must not (it proves the others still pass against it); each legal
variation against the checks its freedom touches.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.relay import RelaySuite
from pytest_osfoundry.conformance.suite._expect import CheckFailure
from pytest_osfoundry.conformance.suite._registry import find_check
from tests.relay_conformance.broken import BROKEN, CAUGHT_BY, LEGAL

ROOT = Path(__file__).resolve().parents[2]

#: A check each broken relay must still pass (not one of the checks meant for it).
UNAFFECTED = {name: "D14-relay-channel" for name in BROKEN}
UNAFFECTED["wrong-channel"] = "D14-relay-start-first"
UNAFFECTED["ignores-interval"] = "D12-relay-ticked-only"
# The re-check's narrower faults pass the D13 checks that change sharing while the sync is
# answered (which is why the checks above them exist).
UNAFFECTED["recheck-once-per-sync"] = "D13-relay-untick"
UNAFFECTED["recheck-synced-slug"] = "D13-relay-rename"
UNAFFECTED["recheck-missing-shared"] = "D13-relay-untick"
# Issue 43's misses: each passes the older check that let it through.
UNAFFECTED["no-truncation-mark"] = "D18-relay-bound-ascii"
UNAFFECTED["go-escapes"] = "D18-relay-bound-japanese"
UNAFFECTED["python-compact"] = "D18-relay-bound-ascii"
# Errors cut in bytes or code points pass the ASCII error's cut.
UNAFFECTED["error-cut-bytes"] = "D18-relay-error-cut"
UNAFFECTED["error-cut-code-points"] = "D18-relay-error-cut"
# Three tries in a row pass a start whose answer is lost once.
UNAFFECTED["gives-up-lost-start"] = "R14-relay-lost-start"

#: The checks each legal variation must pass (those its freedom touches).
LEGAL_CHECKS = {
    "reference": [
        "D13-relay-each-command",
        "D13-relay-rename-queued",
        "D18-relay-error-cut-utf16",
    ],
    "error-cut-lone-surrogate": ["D18-relay-error-cut-utf16"],
    "error-cut-replacement": ["D18-relay-error-cut-utf16"],
    "error-cut-question-mark": ["D18-relay-error-cut-utf16"],
    "long-execution-ids": [
        "D18-relay-bound-ascii",
        "D18-relay-bound-emoji",
        "D17-relay-kill-restart",
    ],
    "escaped-json": [
        "D18-relay-bound-japanese",
        "D18-relay-bound-emoji",
        "D18-relay-bound-escapes",
        "D12-relay-ticked-only",
    ],
    "other-outbox-store": [
        "D17-relay-resend-refused",
        "D17-relay-kill-restart",
        "D17-relay-no-resend",
    ],
    "slow-first-sync": ["D11-relay-cadence", "D13-relay-untick", "D16-relay-cancel-once"],
}


#: Checks that wait on the relay for tens of seconds (a fault held for several passes):
#: their pairs start first, so that the table costs about its slowest pair.
LONG = (
    "D17-relay-survives-",
    "D17-relay-resend-",
    "D17-relay-kill-restart",
    "D12-relay-outbox-first",
)


def _pairs() -> list[tuple[str, str]]:
    pairs = [(name, check_id) for name in BROKEN for check_id in sorted(CAUGHT_BY[name])]
    pairs += [(name, UNAFFECTED[name]) for name in BROKEN]
    pairs += [(name, check_id) for name in LEGAL for check_id in LEGAL_CHECKS[name]]
    return sorted(pairs, key=lambda pair: not pair[1].startswith(LONG))  # stable


@pytest.fixture(scope="module")
def verdicts(monkeypatch_module: pytest.MonkeyPatch) -> dict[tuple[str, str], str | None]:
    """Each pair's verdict: ``None`` passed, else the failure's first line."""
    monkeypatch_module.chdir(ROOT)  # the relay command imports tests.relay_conformance
    suite = RelaySuite("embedded")
    out: dict[tuple[str, str], str | None] = {}

    def one(pair: tuple[str, str]) -> None:
        name, check_id = pair
        argv = [sys.executable, "-m", "tests.relay_conformance.broken", name]
        conf = suite.context(check_id, argv=argv)
        try:
            find_check(check_id)(conf)
            out[pair] = None
        except CheckFailure as err:
            out[pair] = str(err).splitlines()[0] if str(err) else "failed"
        except Exception as err:  # a bug of the suite: shown, never taken for a catch
            out[pair] = f"ERROR {type(err).__name__}: {err}"
        finally:
            conf.close()

    try:
        with ThreadPoolExecutor(12) as pool:
            list(pool.map(one, _pairs()))
    finally:
        suite.close()
    return out


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_relay_fails_exactly_its_checks(name, verdicts) -> None:
    for check_id in sorted(CAUGHT_BY[name]):
        verdict = verdicts[(name, check_id)]
        assert verdict is not None, f"{name}: {check_id} passed a relay that breaks it"
        assert not verdict.startswith("ERROR"), f"{name}: {check_id}: {verdict}"
    other = UNAFFECTED[name]
    assert verdicts[(name, other)] is None, f"{name}: {other} failed: {verdicts[(name, other)]}"


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal_variation_passes(name, verdicts) -> None:
    failed = {c: verdicts[(name, c)] for c in LEGAL_CHECKS[name] if verdicts[(name, c)] is not None}
    assert not failed, f"{name} is a legal relay, yet: {failed}"


def test_a_bound_verdict_states_what_was_measured(verdicts) -> None:
    """Against a relay bounding in bytes, the Japanese case at 100,000 units fails saying
    so: the whole completion's length (not one measured on the truncated body) and the
    posted one, in UTF-16 units and in bytes."""
    verdict = verdicts[("bytes", "D18-relay-bound-japanese")]
    assert verdict is not None and verdict.startswith(
        "japanese: with the whole result the completion would be 100,000 UTF-16 units"
    ), verdict
    assert "UTF-8 bytes" in verdict and "carrying no result" in verdict, verdict
