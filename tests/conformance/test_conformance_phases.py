"""The order of a concurrent batch: the pool, then the exclusive checks one by one (in
either order), then the ``last`` checks alongside each other
(``_concurrent.ConcurrentRunner``; the waits inside a check: test_conformance_stages.py)."""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import pytest

from pytest_osfoundry.conformance.scheduling._protocol import Schedule
from pytest_osfoundry.conformance.server import _runner as _concurrent
from pytest_osfoundry.conformance.server._harness import Conformance
from pytest_osfoundry.conformance.suite._registry import CheckInfo, check
from tests.conformance.osf_conformance_kit import made_info


def _info(name: str, schedule: Schedule = "alongside") -> CheckInfo:
    return made_info(f"R1-{name}", schedule=schedule)


def test_last_checks_run_after_the_exclusive_ones_and_alongside_each_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    infos = {
        "a": _info("a"), "b": _info("b"),
        "alone-1": _info("alone-1", schedule="alone"),
        "alone-2": _info("alone-2", schedule="alone"),
        "last-1": _info("last-1", schedule="last"), "last-2": _info("last-2", schedule="last"),
    }
    items = [mock.Mock(spec=pytest.Function, nodeid=name) for name in infos]
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    both_last = threading.Barrier(2, timeout=10)  # broken unless the two run at once

    def run_check(item: Any, conf: Any, *_: Any) -> _concurrent.Outcome:
        with lock:
            events.append(("start", item.nodeid))
        if item.nodeid.startswith("last-"):
            both_last.wait()
        with lock:
            events.append(("end", item.nodeid))
        return _concurrent.Outcome(conf)

    monkeypatch.setattr(_concurrent, "upcoming", lambda first: items[1:])
    monkeypatch.setattr(_concurrent, "_runnable", lambda item: infos[item.nodeid])
    monkeypatch.setattr(_concurrent, "liveness_of", lambda target: None)
    monkeypatch.setattr(_concurrent, "run_check", run_check)
    def make_context(item: pytest.Item, target: Any) -> Any:
        return mock.Mock(spec=Conformance)

    runner = _concurrent.ConcurrentRunner(4, make_context, lambda item, conf: None)
    runner._prerun(items[0], target=None)

    def at(kind: str, name: str) -> int:
        return events.index((kind, name))

    pool_ended = max(at("end", "a"), at("end", "b"))
    first, second = sorted(["alone-1", "alone-2"], key=lambda name: at("start", name))
    assert pool_ended < at("start", first) < at("end", first) < at("start", second)
    assert at("end", second) < min(at("start", "last-1"), at("start", "last-2"))
    assert not both_last.broken


def test_a_check_cannot_be_both_exclusive_and_last() -> None:
    with pytest.raises(ValueError, match=r"exclusive .* and last .* contradict"):
        check("R1-both", "Runs alone and alongside.", exclusive=True, last=True)
