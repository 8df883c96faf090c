"""Checks run concurrently (``--osf-concurrency``) and report as a serial run does.

The serial run (``--osf-concurrency 1``) is the reference: same checks, same order,
same outcomes, same JUnit test cases, same request counts. The checks that change
the project's shared session list run alone: a wrapped reference server watches
every sync that shares anything but the fixed sessions and records whether any
other request was in flight meanwhile.
"""

from __future__ import annotations

import inspect
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.suite._registry import (
    CheckInfo,
    _check_modules,
    all_checks,
    check_info,
)
from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import ReferenceServer
from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_race import run_call


def _junit_cases(path: Path) -> list[tuple[str, str]]:
    root = ET.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        kinds = sorted(child.tag for child in case if child.tag != "properties")
        cases.append((case.get("name", ""), ",".join(kinds)))
    return cases


def test_concurrent_run_reports_like_the_serial_run(
    run_suite: Callable[..., SuiteRun], pytester: pytest.Pytester
) -> None:
    serial = run_suite("--osf-target=embedded", "--osf-concurrency=1", "--junitxml=serial.xml")
    many = run_suite(
        "--osf-target=embedded", "--osf-concurrency=8", "--junitxml=many.xml", report="many.json"
    )
    assert serial.result.ret == many.result.ret == pytest.ExitCode.OK, many.text[-3000:]
    assert list(many.outcomes.items()) == list(serial.outcomes.items())
    assert _junit_cases(pytester.path / "many.xml") == _junit_cases(pytester.path / "serial.xml")
    counts = {c["id"]: c["requests"] for c in serial.report["checks"]}
    assert {c["id"]: c["requests"] for c in many.report["checks"]}.keys() == counts.keys()
    # the role sessions' handshakes (initialize + its notification, five roles) land in
    # whichever check opened them first; every other request is the same
    total = sum(c["requests"] for c in many.report["checks"])
    assert abs(total - sum(counts.values())) <= 2 * 5
    # a check declared with shared_evidence (the era discovery, found once per process)
    # may send nothing of its own; every other check that ran made requests
    shared = {c.check_id for c in all_checks() if c.shared_evidence}
    for check in serial.report["checks"]:
        if check["outcome"] != "skipped" and check["id"] not in shared:
            assert check["requests"] >= 1, check["id"]


def test_exitfirst_stops_at_the_same_check(run_suite: Callable[..., SuiteRun]) -> None:
    target = "--osf-target=embedded:tests.conformance.variants:other_agent_cancels"
    serial = run_suite(target, "-x", "--osf-concurrency=1")
    many = run_suite(target, "-x", "--osf-concurrency=4", report="many.json")
    assert serial.result.ret == many.result.ret == pytest.ExitCode.TESTS_FAILED
    assert many.outcomes == serial.outcomes
    assert list(many.outcomes.values()).count("failed") == 1


def test_bad_concurrency_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--osf-target=embedded", "--osf-concurrency=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--osf-concurrency: must be at least 1, got 0*"])
    result = pytester.runpytest("--osf-target=embedded", "--osf-concurrency=many")
    result.stderr.fnmatch_lines(["*--osf-concurrency: expected a whole number, got 'many'*"])


# ---------------------------------------------------------------------- isolation
_SYNC_ARGUMENT = re.compile(
    r"(?:desktop\.sync\(|_sync_answer\(c,)\s*([^),]*)"  # the desktop's syncs
    r'|"sessions":\s*([^,}\n]*)'  # a raw sync's body (with any token: a broken server may take it)
)
_FIXED_LIST = ("", "c.roles.sessions")
# The fixed sessions with one slug renamed (D13-slug-changed): every session stays
# shared and no other check judges that slug, so that sync needs no hold.
_RENAMES = ("renamed",)


def _other_lists(source: str) -> int:
    """How many syncs in ``source`` share something else than the fixed sessions."""
    return sum(
        (call or raw).strip() not in _FIXED_LIST + _RENAMES
        for call, raw in _SYNC_ARGUMENT.findall(source)
    )


def test_checks_that_share_other_session_lists_hold_the_list() -> None:
    """A check syncing anything but the fixed sessions replaces the list for everyone:
    it holds the list meanwhile (``c.desktop.changing_list()``, every such sync inside
    the block) and runs alongside the others; only the checks whose evidence is timing
    run alone."""
    found = {}
    for module in _check_modules():
        for value in vars(module).values():
            info = check_info(value)
            if info is not None:
                source = inspect.getsource(value)
                held = source.partition("changing_list(")[2]
                found[info.check_id] = (
                    _other_lists(source) > 0,
                    _other_lists(source) != _other_lists(held),
                    info.exclusive,
                    info.last,
                )
    changers = {cid for cid, (changes, *_) in found.items() if changes}
    assert changers >= {"R8-default-limit", "D10-sync-replaces", "D10-sync-max-100"}, changers
    # the checks that hold the list are declared so (holds_list: they start first)
    holders = {cid for cid, value in _sources().items() if "changing_list(" in value}
    assert holders == {cid for cid in found if _info_of(cid).holds_list}
    unheld = {cid for cid, (_, outside, *_) in found.items() if outside}
    assert not unheld, f"syncing another list outside changing_list(): {unheld}"
    # the two checks whose evidence is timing run alone: D6-timing, and the race of R5
    exclusive = {cid for cid, (*_, alone, _) in found.items() if alone}
    assert exclusive == {"D6-timing", "R5-concurrent-same-key"}
    # the wire-schema checks judge what every other check received: they run last
    # (alongside each other; they change nothing another check reads)
    wire = {cid for cid in found if cid.startswith("R1-wire-schema-")}
    assert len(wire) == 5
    assert {cid for cid, (*_, last) in found.items() if last} == wire
    # R5 and the wire-schema checks wait only where their evidence needs it (_stages):
    # R5 around its simultaneous calls, a wire-schema check before judging
    within = {cid for cid in found if _info_of(cid).waits_within}
    assert within == wire | {"R5-concurrent-same-key"}


def _sources() -> dict[str, str]:
    """Each rule-book check's source, by id."""
    found = {}
    for module in _check_modules():
        for value in vars(module).values():
            info = check_info(value)
            if info is not None:
                found[info.check_id] = inspect.getsource(value)
    return found


def _info_of(check_id: str) -> CheckInfo:
    for module in _check_modules():
        for value in vars(module).values():
            info = check_info(value)
            if info is not None and info.check_id == check_id:
                return info
    raise LookupError(check_id)


# a check sends requests through the context's parts, or hands the context to a helper
_SENDS = re.compile(
    r"\b(?:c|osf_conf)\.(?:wire|agent|desktop|roles|runs)\b|\b_\w+\((?:c|osf_conf)\b"
)


def test_checks_that_send_nothing_themselves_declare_shared_evidence() -> None:
    """``shared_evidence`` is declared exactly where a check only judges what the suite
    found once per process (it touches no part of the context that sends requests)."""
    declared, sends_nothing = set(), set()
    for module in _check_modules():
        for value in vars(module).values():
            info = check_info(value)
            if info is None:
                continue
            if info.shared_evidence:
                declared.add(info.check_id)
            if not _SENDS.search(inspect.getsource(value)):
                sends_nothing.add(info.check_id)
    assert sends_nothing, "the pattern finds nothing: it no longer matches how checks judge"
    assert declared == sends_nothing


def test_shared_evidence_is_declared_with_the_check() -> None:
    from pytest_osfoundry.conformance.suite._registry import check

    def judge(osf_conf: object) -> None:
        """A check body (never run)."""

    def act(osf_conf: object) -> None:
        """A check body (never run)."""

    shared = check_info(check("R1-shared", "Says something.", schedule="shared-evidence")(judge))
    assert shared is not None and shared.shared_evidence
    plain = check_info(check("R1-plain", "Says something.")(act))
    assert plain is not None and not plain.shared_evidence


class _Watch:
    """What the watched server saw: for each sync of another list, how many other syncs
    overlapped it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.syncs_in_flight: list[str] = []  # the list each sync in flight carries
        self.open: list[tuple[str, list[int]]] = []
        self.overlaps: list[int] = []
        self.keys_in_flight: list[str | None] = []  # each request's idempotency key
        self.beside_races: list[int] = []  # other requests in flight beside a race


def _list_of(body: bytes) -> str:
    """Which list a sync carries: the overflow, the hundred (fixed and extra), or the
    fixed sessions alone."""
    if b"overflow-" in body:
        return "overflow"
    return "hundred" if b"osf-conformance-extra-" in body else "fixed"


def _run_key(request: Request) -> str | None:
    """The idempotency key of a run_graph_session call, or ``None``."""
    call = run_call(request)
    return None if call is None else str(call["params"]["arguments"]["idempotency_key"])


WATCH = _Watch()
RUN_DELAY = 0.02
"""Seconds the watched server takes over each run_graph_session call."""


class _Watched(HandlerWrapper[ReferenceServer]):
    def __init__(self) -> None:
        super().__init__(ReferenceServer())  # the door's serve_at reaches it
        self.server = self.inner
        self.mcp_path = self.server.mcp_path

    def provision(self) -> object:
        return self.server.provision()

    def __call__(self, request: Request, /) -> Response:
        sync = request.path.endswith("/sync")
        listed = _list_of(request.body) if sync else "fixed"
        other_list = sync and listed != "fixed"
        mine = [0]
        key = _run_key(request)
        with WATCH.lock:
            WATCH.keys_in_flight.append(key)
            if key is not None and WATCH.keys_in_flight.count(key) > 1:  # a race's calls
                WATCH.beside_races.append(sum(k != key for k in WATCH.keys_in_flight))
            if sync:
                WATCH.syncs_in_flight.append(listed)
                for kind, seen in WATCH.open:
                    seen[0] += kind != listed  # the same list synced beside it: no harm
            if other_list:
                mine[0] += sum(kind != listed for kind in WATCH.syncs_in_flight)
                WATCH.open.append((listed, mine))
        try:
            if key is not None:
                time.sleep(RUN_DELAY)  # so that a race's simultaneous calls meet here
            return self.server(request)
        finally:
            with WATCH.lock:
                WATCH.keys_in_flight.remove(key)
                if sync:
                    WATCH.syncs_in_flight.remove(listed)
                if other_list:
                    WATCH.open[:] = [entry for entry in WATCH.open if entry[1] is not mine]
                    WATCH.overlaps.append(mine[0])


def watched() -> _Watched:
    """The reference server, watched (``embedded:...:watched``)."""
    return _Watched()


def test_no_other_sync_overlaps_a_list_changing_sync(
    run_suite: Callable[..., SuiteRun],
) -> None:
    """The checks holding the list run alongside the others, yet no sync of another list
    reaches the server while one of theirs is there (``_holds``: only the hundred-session
    syncs of the checks sharing that list may meet); and the race's calls meet there
    alone."""
    WATCH.overlaps.clear()
    WATCH.beside_races.clear()
    run = run_suite(
        "--osf-target=embedded:tests.conformance.test_conformance_concurrency:watched",
        "--osf-concurrency=16",
    )
    assert run.result.ret == pytest.ExitCode.OK, run.text[-3000:]
    assert len(WATCH.overlaps) >= 4
    assert WATCH.overlaps == [0] * len(WATCH.overlaps)
    # R5's simultaneous calls met at the server (it runs alone), nothing else with them
    assert WATCH.beside_races, "the race's calls never overlapped each other"
    assert WATCH.beside_races == [0] * len(WATCH.beside_races)


_COUNT_CONTEXTS = """
import pytest
from pytest_osfoundry.conformance.server import _harness

made = []
_init = _harness.Conformance.__init__

def _counting(self, *args, **kwargs):
    made.append(self)
    _init(self, *args, **kwargs)

_harness.Conformance.__init__ = _counting

@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    conf = item.funcargs.get("osf_conf")
    if conf is not None and conf is not made[-1] and conf not in made:
        raise AssertionError("osf_conf was made outside Conformance")

def pytest_sessionfinish(session):
    print(f"contexts={len(made)} items={len(session.items)}")
"""


def test_a_pre_run_check_gets_the_context_it_ran_with(pytester: pytest.Pytester) -> None:
    """Each check's context is made once (by the pre-run), not again by the fixture:
    the one extra is the batch's first item's, made before the pre-run began."""
    pytester.makeconftest(_COUNT_CONTEXTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-s", "--osf-target=embedded", "--osf-concurrency=8"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    found = re.search(r"contexts=(\d+) items=(\d+)", result.stdout.str())
    assert found is not None, result.stdout.str()[-3000:]
    contexts, items = int(found[1]), int(found[2])
    assert contexts == items + 1, found[0]
