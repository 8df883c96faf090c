"""The server suite's concurrent runner (``--osf-concurrency N``).

When the first server check of a batch is about to run, :class:`ConcurrentRunner` runs
every server check still to come in this process as the scheduling machinery does for
every suite (:mod:`~pytest_osfoundry.conformance.scheduling._runner`): each with its own
fresh :class:`~pytest_osfoundry.conformance.server._harness.Conformance` context,
closed after it, its stage in the context (``c.alone()``, ``c.after_the_rest()``).
Every check shares the fixed session list
(:mod:`~pytest_osfoundry.conformance.server._sessions`) and judges only its own command
ids; the few that share another list hold it meanwhile
(:mod:`~pytest_osfoundry.conformance.scheduling._shared_list`), so they run
concurrently too. A target found gone
(:mod:`~pytest_osfoundry.conformance.server._liveness`) stops the batch.

``--osf-concurrency 1`` turns this off: every check runs in pytest's own call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_osfoundry.conformance.scheduling._internal import (
    InFlight,
    Phases,
    PreRunner,
    Stage,
    amend,
    upcoming,
)
from pytest_osfoundry.conformance.server._harness import Conformance
from pytest_osfoundry.conformance.server._liveness import liveness_of
from pytest_osfoundry.conformance.suite._internal import CheckInfo, check_info

__all__ = ["RUNNER_PLUGIN", "ConcurrentRunner", "Outcome", "run_check"]

RUNNER_PLUGIN = "osfoundry-conformance-concurrent"
"""The name the concurrent runner is registered under."""

_FIXTURE = "osf_conf"


@dataclass
class Outcome:
    """What a pre-run check did: its context, and the exception its call or its
    context's close raised (``None``: it returned / closed cleanly)."""

    conf: Conformance
    error: BaseException | None = None
    close_error: BaseException | None = None
    seconds: float = 0.0


def _runnable(item: pytest.Item) -> CheckInfo | None:
    """The check of ``item`` if it can be pre-run: a check taking only ``osf_conf``."""
    if not isinstance(item, pytest.Function):
        return None
    info = check_info(getattr(item, "obj", None))
    if info is None:
        return None
    names = tuple(item._fixtureinfo.argnames)
    return info if names == (_FIXTURE,) else None


def run_check(
    item: pytest.Function,
    conf: Conformance,
    in_flight: InFlight | None = None,
    concurrency: int = 1,
) -> Outcome:
    """Call ``item``'s check with ``conf``, then close ``conf``; the outcome, never raising.

    ``in_flight`` counts the checks running meanwhile: a check failing at the
    connection level while others ran gets the concurrency hint in its message
    (:mod:`~pytest_osfoundry.conformance.scheduling._in_flight`); nothing is retried.
    """
    outcome = Outcome(conf)
    in_flight = in_flight if in_flight is not None else InFlight()
    start = time.perf_counter()
    with in_flight.running():
        try:
            item.obj(**{_FIXTURE: conf})
        except BaseException as err:  # stored, re-raised by the item's call
            outcome.error = err
            amend(err, in_flight.count - 1, concurrency)
        else:
            outcome.error = _undeclared(conf)
    try:
        conf.close()
    except BaseException as err:  # stored, re-raised at the item's teardown
        outcome.close_error = err
    outcome.seconds = time.perf_counter() - start
    return outcome


def _undeclared(conf: Conformance) -> TypeError | None:
    """The error of a check that returned without doing what it declared, or ``None``:
    declared ``"alone-within"`` or ``"last-within"`` and never waited at its stage (it
    ran alongside the others where it promised not to), or declared ``"shares-list"``
    and never held the list (the batch started it first for nothing: the declaration
    is stale)."""
    info = conf.info
    if info.needs.waits_within and not conf.stage.waited:
        call = "with c.alone():" if info.needs.alone else "c.after_the_rest()"
        return TypeError(
            f"check {info.check_id} is declared schedule={info.schedule!r} but returned "
            f"without {call}: it ran alongside the other checks; wait where its evidence "
            "needs it"
        )
    if info.needs.holds_list and not conf.desktop.held:
        return TypeError(
            f"check {info.check_id} is declared schedule={info.schedule!r} but returned "
            "without holding the list (with c.desktop.changing_list():); drop the declaration"
        )
    return None


class ConcurrentRunner(PreRunner[Outcome]):
    """The pytest plugin that pre-runs the server checks of this process and replays them.

    ``make_context(item, target)`` builds a check's fresh context; ``attach(item, conf)``
    hands the pre-run context to the reporting (exchanges, notes, request count);
    ``on_interrupt()`` is called on Ctrl-C in the middle of a batch. A target found gone
    (:mod:`~pytest_osfoundry.conformance.server._liveness`) stops the batch and, after the
    loop, the run.
    """

    def __init__(
        self,
        workers: int,
        make_context: Callable[[pytest.Item, Any], Conformance],
        attach: Callable[[pytest.Item, Conformance], None],
        on_interrupt: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(workers, on_interrupt)
        self._make_context = make_context
        self._attach = attach
        self._in_flight = InFlight()
        self._targets: list[Any] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """Replay the stored outcome of a check (pre-running its batch first if needed)."""
        if _runnable(pyfuncitem) is None:
            return None
        outcome = self._outcomes.get(pyfuncitem.nodeid)
        if outcome is None:
            conf = pyfuncitem.funcargs.get(_FIXTURE)
            if not isinstance(conf, Conformance):
                return None
            self._prerun(pyfuncitem, conf.target)
            outcome = self._replay_or_skip(pyfuncitem)
        self._attach(pyfuncitem, outcome.conf)
        if outcome.error is not None:
            raise outcome.error
        return True

    def runs(self, item: pytest.Item) -> bool:
        """Whether this runner runs ``item`` (and so ends the run if its target is gone)."""
        return _runnable(item) is not None

    def context_of(self, item: pytest.Item) -> Conformance | None:
        """The context ``item``'s check ran with in the pre-run (closed already), or
        ``None`` when it has not run yet (the batch's first) or is not pre-run."""
        outcome = self._outcomes.get(item.nodeid)
        return None if outcome is None else outcome.conf

    def after_loop(self, session: pytest.Session) -> None:
        """A target found gone during a batch fails the run, once what ended is reported."""
        for target in self._targets:
            gone = getattr(liveness_of(target), "gone", None)
            if gone is not None and not session.shouldfail:
                session.shouldfail = gone

    # ------------------------------------------------------------------ pre-running
    def _prerun(self, first: pytest.Function, target: Any) -> None:
        plan = Phases(waits_within=True)
        for item in [first, *upcoming(first)]:
            info = _runnable(item)
            if info is None or item.nodeid in self._outcomes:
                continue
            assert isinstance(item, pytest.Function)
            plan.add(item, info.needs)
        plan.longest_first()

        def one(item: pytest.Function, stage: Stage) -> None:
            conf = self._make_context(item, target)
            stage.idle = self._in_flight.idle  # its waits from here on are not in flight
            conf.stage = stage
            self._keep(item, run_check(item, conf, self._in_flight, self.workers))

        record = liveness_of(target)  # made once here, not raced for by the checks' threads
        if target not in self._targets:
            self._targets.append(target)
        self._run(plan, one, "osf-check", lambda: getattr(record, "gone", None))
