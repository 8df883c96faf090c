"""The relay suite's concurrent batch keeps the server suite's phases: the pool, then
the exclusive checks one by one (in either order), then the ``last`` checks alongside
each other, each whole
(``scheduling._contexts.ContextRunner`` through ``_runner.run_phases``)."""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import pytest

from pytest_osfoundry.conformance.relay._evidence import RELAY_CONF
from pytest_osfoundry.conformance.relay._harness import RelayConformance
from pytest_osfoundry.conformance.scheduling import _contexts
from pytest_osfoundry.conformance.scheduling._protocol import Schedule
from pytest_osfoundry.conformance.suite._registry import CheckInfo
from tests.conformance.osf_conformance_kit import made_info


def _info(name: str, schedule: Schedule = "alongside") -> CheckInfo:
    return made_info(f"R14-{name}", "relay", schedule=schedule)


def test_relay_checks_run_in_the_server_suites_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    infos = {
        "a": _info("a"),
        "b": _info("b"),
        "alone-1": _info("alone-1", schedule="alone"),
        # a relay context has no stage: declared waits_within, it is still waited for whole
        "alone-2": _info("alone-2", schedule="alone-within"),
        "last-1": _info("last-1", schedule="last"),
        "last-2": _info("last-2", schedule="last"),
    }
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    both_last = threading.Barrier(2, timeout=10)  # broken unless the two run at once

    def body(name: str) -> Any:
        def run(**_: Any) -> None:
            with lock:
                events.append(("start", name))
            if name.startswith("last-"):
                both_last.wait()
            with lock:
                events.append(("end", name))

        return run

    items = []
    for name in infos:
        item = mock.Mock(spec=pytest.Function, nodeid=name)
        item.obj = body(name)
        item.stash = pytest.Stash()
        items.append(item)
    monkeypatch.setattr(_contexts, "upcoming", lambda first: items[1:])
    monkeypatch.setattr(_contexts.ContextRunner, "_runnable", lambda self, item: True)

    runner = _contexts.ContextRunner(
        4,
        lambda item: mock.Mock(spec=RelayConformance),
        needs=lambda item: infos[str(item.nodeid)].needs,
        fixture="osf_relay_conf",
        context_key=RELAY_CONF,
        thread="osf-relay-check",
    )
    runner._prerun(items[0])

    def at(kind: str, name: str) -> int:
        return events.index((kind, name))

    pool_ended = max(at("end", "a"), at("end", "b"))
    first, second = sorted(["alone-1", "alone-2"], key=lambda name: at("start", name))
    assert pool_ended < at("start", first) < at("end", first) < at("start", second)
    assert at("end", second) < min(at("start", "last-1"), at("start", "last-2"))
    assert not both_last.broken
    assert all(runner._outcomes[name].error is None for name in infos)


def _name_of(obj: Any, items: list[Any]) -> str:
    return next(str(i.nodeid) for i in items if i.obj is obj)
