"""Running relay checks at once in one process (``--osf-relay-concurrency N``).

A relay check spends its time waiting for a relay process, so when the first relay
check of this process is about to run, :class:`RelayConcurrentRunner` runs every
relay check still to come in a thread pool, each with its own context (account,
token, project, driver scenario, relay process group), and stores each outcome.
Each item's call then replays its stored outcome in pytest's usual order, so
reports, baselines, ``-x``, ``-k`` and JUnit XML are those of a serial run (apart
from timings). The phases are the server suite's
(:func:`~pytest_osfoundry.conformance.scheduling._runner.run_phases`): a check whose
``schedule`` is ``"alone"`` runs alone after the others, one whose schedule is
``"last"`` after those, alongside the other ``last`` ones, each whole (a relay context
has no stage to wait at, so ``"alone-within"`` and ``"last-within"`` run as ``"alone"``
and ``"last"`` here). A batch Ctrl-C stops ends the server suite's
way (:class:`~pytest_osfoundry.conformance.scheduling._runner.PreRunner`): what ended is
reported, the rest is not run. ``--osf-relay-concurrency 1`` turns this off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pytest_osfoundry.conformance.relay._evidence import RELAY_CONF
from pytest_osfoundry.conformance.relay._harness import RelayConformance
from pytest_osfoundry.conformance.scheduling._internal import Phases, PreRunner, Stage, upcoming
from pytest_osfoundry.conformance.suite._internal import check_info

__all__ = ["FIXTURE", "RelayConcurrentRunner", "RelayOutcome"]

FIXTURE = "osf_relay_conf"


@dataclass
class RelayOutcome:
    """What a pre-run relay check raised (``None``: it returned) and how long it took."""

    error: BaseException | None = None
    close_error: BaseException | None = None
    seconds: float = 0.0


def _runnable(item: pytest.Item) -> bool:
    if not isinstance(item, pytest.Function) or check_info(getattr(item, "obj", None)) is None:
        return False
    return tuple(item._fixtureinfo.argnames) == (FIXTURE,)


class RelayConcurrentRunner(PreRunner[RelayOutcome]):
    """The pytest plugin that pre-runs this process's relay checks and replays them.

    ``make_context(item)`` builds a check's fresh context; ``on_interrupt()`` is called
    on Ctrl-C in the middle of the batch (the suite kills its relays and wakes the
    checks' waits, so the batch ends at once).
    """

    def __init__(
        self,
        workers: int,
        make_context: Callable[[pytest.Item], RelayConformance],
        on_interrupt: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(workers, on_interrupt)
        self._make_context = make_context

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """Replay the stored outcome of a relay check (pre-running them all first)."""
        if not _runnable(pyfuncitem):
            return None
        if pyfuncitem.nodeid not in self._outcomes:
            self._prerun(pyfuncitem)  # this item and every one still to come here
        outcome = self._replay_or_skip(pyfuncitem)
        if outcome.error is not None:
            raise outcome.error
        return True

    def _prerun(self, first: pytest.Function) -> None:
        # The items this process runs from here on (under xdist: those its worker was given).
        batch = [
            i for i in [first, *upcoming(first)] if _runnable(i) and i.nodeid not in self._outcomes
        ]
        phases = Phases()
        for item in batch:
            info = check_info(getattr(item, "obj", None))
            assert info is not None and isinstance(item, pytest.Function)  # _runnable
            phases.add(item, info.needs)

        def one(item: pytest.Function, _stage: Stage) -> None:
            outcome = RelayOutcome()
            began = time.perf_counter()
            try:
                conf = self._make_context(item)
            except BaseException as err:
                outcome.error = err
            else:
                item.stash[RELAY_CONF] = conf  # the report shows what its relay sent
                try:
                    item.obj(**{FIXTURE: conf})
                except BaseException as err:  # stored, re-raised by the item's call
                    outcome.error = err
                try:
                    conf.close()
                except BaseException as err:
                    outcome.close_error = err
            outcome.seconds = time.perf_counter() - began
            self._keep(item, outcome)

        self._run(phases, one, "osf-relay-check")
