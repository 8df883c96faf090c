"""Where an exclusive or ``last`` check waits inside its body (``_stages``, issue 23).

A check declared ``waits_within`` does its other work from the start of the batch,
alongside the pool, and waits only around the part that needs it: ``c.alone()`` once
nothing else runs, ``c.after_the_rest()`` once every other check has ended.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest

from pytest_osfoundry.conformance.scheduling._in_flight import InFlight
from pytest_osfoundry.conformance.scheduling._protocol import Schedule
from pytest_osfoundry.conformance.scheduling._waits import Interrupted, Stages, no_stage
from pytest_osfoundry.conformance.server import _runner as _concurrent
from pytest_osfoundry.conformance.server._harness import Conformance
from pytest_osfoundry.conformance.suite._registry import CheckInfo, check
from tests.conformance.osf_conformance_kit import made_info


def _info(name: str, schedule: Schedule = "alongside") -> CheckInfo:
    return made_info(f"R1-{name}", schedule=schedule)


class _Context:
    """What run_check needs of a check's context: its info, stage and close()."""

    def __init__(self, info: CheckInfo) -> None:
        self.info = info
        self.stage = no_stage()

    def close(self) -> None:
        pass


def _run_batch(
    monkeypatch: pytest.MonkeyPatch,
    infos: dict[str, CheckInfo],
    bodies: dict[str, Callable[[Any], None]],
    workers: int = 4,
) -> dict[str, _concurrent.Outcome]:
    """Pre-run ``infos`` (in this order) through the real runner and run_check."""
    items = []
    for name in infos:
        item = mock.Mock(spec=pytest.Function, nodeid=name)
        item.obj = lambda osf_conf, name=name: bodies[name](osf_conf)
        items.append(item)
    monkeypatch.setattr(_concurrent, "upcoming", lambda first: items[1:])
    monkeypatch.setattr(_concurrent, "_runnable", lambda item: infos[item.nodeid])
    monkeypatch.setattr(_concurrent, "liveness_of", lambda target: None)

    def make_context(item: pytest.Item, target: Any) -> Any:  # a stand-in for Conformance
        return _Context(infos[item.nodeid])

    runner = _concurrent.ConcurrentRunner(workers, make_context, lambda item, conf: None)
    runner._prerun(items[0], target=None)
    return runner._outcomes


def test_a_check_waiting_within_works_alongside_the_pool_and_waits_where_it_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    lock = threading.Lock()
    release_pool = threading.Event()
    both_set_up = threading.Barrier(2, timeout=10)

    def log(event: str) -> None:
        with lock:
            events.append(event)

    def pool_check(name: str) -> Callable[[Any], None]:
        def body(conf: Any) -> None:
            log(f"start {name}")
            release_pool.wait(10)  # held until both within-checks have done their set-up
            log(f"end {name}")

        return body

    def race(conf: Any) -> None:
        log("race set-up")
        both_set_up.wait()
        with conf.stage.alone():
            log("race alone")
            time.sleep(0.02)
            log("race alone ends")
        log("race after")

    def judge(conf: Any) -> None:
        log("judge sends")
        both_set_up.wait()
        release_pool.set()
        conf.stage.after_the_rest()
        log("judge judges")

    infos = {
        "a": _info("a"),
        "b": _info("b"),
        "race": _info("race", schedule="alone-within"),
        "judge": _info("judge", schedule="last-within"),
    }
    bodies = {"a": pool_check("a"), "b": pool_check("b"), "race": race, "judge": judge}
    outcomes = _run_batch(monkeypatch, infos, bodies)

    assert all(outcome.error is None for outcome in outcomes.values()), outcomes
    assert release_pool.is_set()  # both set-ups ran while the pool's checks were running
    at = events.index
    pool_ended = max(at("end a"), at("end b"))
    assert at("race set-up") < pool_ended and at("judge sends") < pool_ended
    assert pool_ended < at("race alone")
    assert at("race after") < at("judge judges")


def test_an_alone_stretch_waits_for_a_last_check_still_sending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    sending = threading.Event()

    def race(conf: Any) -> None:
        sending.wait(10)
        with conf.stage.alone():
            events.append("race alone")

    def judge(conf: Any) -> None:
        sending.set()
        time.sleep(0.05)  # still sending while the race asks to be alone
        events.append("judge sent")
        conf.stage.after_the_rest()

    infos = {
        "race": _info("race", schedule="alone-within"),
        "judge": _info("judge", schedule="last-within"),
    }
    outcomes = _run_batch(monkeypatch, infos, {"race": race, "judge": judge})
    assert all(outcome.error is None for outcome in outcomes.values())
    assert events == ["judge sent", "race alone"]


def test_a_whole_exclusive_check_never_overlaps_an_alone_stretch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inside: list[str] = []
    overlaps: list[str] = []
    lock = threading.Lock()

    def enter(name: str) -> None:
        with lock:
            if inside:
                overlaps.append(f"{name} with {inside}")
            inside.append(name)
        time.sleep(0.02)
        with lock:
            inside.remove(name)

    def race(conf: Any) -> None:
        with conf.stage.alone():
            enter("race")
        enter("race after its stretch")  # still its check: the whole one waits for it

    infos = {
        "race": _info("race", schedule="alone-within"),
        "timing": _info("timing", schedule="alone"),
    }
    bodies = {"race": race, "timing": lambda conf: enter("timing")}
    for _ in range(5):
        _run_batch(monkeypatch, infos, bodies)
    assert overlaps == []


def test_a_stretch_alone_inside_the_checks_own_is_part_of_it() -> None:
    stages = Stages(4)
    race, other = stages.join("alone"), stages.join("pool")
    other.ended()
    done = threading.Event()

    def nested() -> None:
        with race.alone(), race.alone():  # would wait for itself were it not re-entrant
            done.set()
        race.ended()

    thread = threading.Thread(target=nested, daemon=True)
    thread.start()
    assert done.wait(5), "a stretch inside the check's own stretch waited for it"
    thread.join(5)


def test_no_more_checks_work_at_once_than_the_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exclusive and ``last`` checks' own threads never add to ``--osf-concurrency``:
    each holds a slot while it works and lets it go while it waits."""
    working: list[str] = []
    most: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        with lock:
            working.append(name)
            most.append(len(working))
        time.sleep(0.01)
        with lock:
            working.remove(name)

    def race(conf: Any) -> None:
        work("race set-up")
        with conf.stage.alone():
            work("race")
        work("race after")

    def judge(conf: Any) -> None:
        work("judge sends")
        conf.stage.after_the_rest()
        work("judge judges")

    infos = {f"p{i}": _info(f"p{i}") for i in range(6)}
    infos |= {
        "race": _info("race", schedule="alone-within"),
        "timing": _info("timing", schedule="alone"),
        **{f"judge{i}": _info(f"judge{i}", schedule="last-within") for i in range(3)},
        "whole": _info("whole", schedule="last"),
    }

    def plain(name: str) -> Callable[[Any], None]:
        return lambda conf: work(name)

    bodies = {name: plain(name) for name in infos}
    bodies["race"] = race
    bodies |= {f"judge{i}": judge for i in range(3)}
    outcomes = _run_batch(monkeypatch, infos, bodies, workers=2)
    assert all(outcome.error is None for outcome in outcomes.values()), outcomes
    assert max(most) <= 2, f"{max(most)} checks worked at once under a concurrency of 2"


def test_a_check_declared_waits_within_that_never_waits_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    infos = {
        "a": _info("a"),
        "race": _info("race", schedule="alone-within"),
        "judge": _info("judge", schedule="last-within"),
    }
    outcomes = _run_batch(monkeypatch, infos, {name: lambda conf: None for name in infos})
    assert outcomes["a"].error is None
    race, judge = outcomes["race"].error, outcomes["judge"].error
    assert isinstance(race, TypeError) and "with c.alone():" in str(race)
    assert isinstance(judge, TypeError) and "c.after_the_rest()" in str(judge)


def test_waits_within_needs_exclusive_or_last() -> None:
    with pytest.raises(ValueError, match="declare exclusive=True or last=True"):
        check("R1-waits-alone", "Waits for nothing.", waits_within=True)


@pytest.mark.parametrize(
    ("schedule", "call"),
    [
        ("alongside", "alone"),
        ("alone", "alone"),
        ("last-within", "alone"),
        ("alongside", "after_the_rest"),
        ("alone-within", "after_the_rest"),
    ],
)
def test_a_check_waits_only_where_it_is_declared_to(schedule: Schedule, call: str) -> None:
    conf = Conformance.__new__(Conformance)
    conf.info = _info("probe", schedule)
    conf.stage = no_stage()
    with pytest.raises(TypeError, match="is not declared"):
        wait = getattr(conf, call)()
        if call == "alone":
            with wait:
                pass


def test_outside_a_batch_the_waits_return_at_once() -> None:
    stage = no_stage()
    with stage.alone():
        pass
    stage.after_the_rest()
    assert stage.waited


def test_an_interrupted_batch_wakes_its_waiting_checks() -> None:
    stages = Stages(4)
    busy = stages.join("pool")  # never ends: the pool was interrupted
    waiter = stages.join("last")
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            waiter.after_the_rest()
        except Interrupted as err:
            errors.append(err)

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.02)
    assert thread.is_alive()
    stages.abort()
    thread.join(5)
    assert not thread.is_alive() and len(errors) == 1
    busy.ended()


def test_a_waiting_check_is_not_in_flight() -> None:
    """A connection failure in an alone stretch gets no concurrency hint: the ``last``
    checks waiting meanwhile send nothing."""
    stages = Stages(4)
    in_flight = InFlight()
    race, judge = stages.join("alone"), stages.join("last")
    race.idle = judge.idle = in_flight.idle
    seen: list[int] = []

    def judging() -> None:
        with in_flight.running():
            judge.after_the_rest()
            judge.ended()

    thread = threading.Thread(target=judging)
    with in_flight.running():
        thread.start()
        with race.alone():
            time.sleep(0.02)
            seen.append(in_flight.count)
        race.ended()
    thread.join(5)
    assert seen == [1]
