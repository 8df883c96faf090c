"""Running the checks of a suite with one context each at once in one process
(``--osf-relay-concurrency N``, ``--osf-agent-concurrency N``).

A relay or agent check spends its time waiting for an outside process, so when the
first such check of this process is about to run, :class:`ContextRunner` runs every
one still to come in a thread pool, each with its own context (account, token,
project, process group, ...), and stores each outcome. Each item's call then replays
its stored outcome in pytest's usual order, so reports, baselines, ``-x``, ``-k`` and
JUnit XML are those of a serial run (apart from timings). The phases are the server
suite's (:func:`~pytest_osfoundry.conformance.scheduling._runner.run_phases`): a check
whose ``schedule`` is ``"alone"`` runs alone after the others, one whose schedule is
``"last"`` after those, alongside the other ``last`` ones, each whole (such a context
has no stage to wait at, so ``"alone-within"`` and ``"last-within"`` run as ``"alone"``
and ``"last"`` here). A batch Ctrl-C stops ends the server suite's way
(:class:`~pytest_osfoundry.conformance.scheduling._runner.PreRunner`): what ended is
reported, the rest is not run. A concurrency of 1 turns this off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import pytest

from pytest_osfoundry.conformance.scheduling._protocol import Needs
from pytest_osfoundry.conformance.scheduling._runner import Phases, PreRunner, upcoming
from pytest_osfoundry.conformance.scheduling._waits import Stage

__all__ = ["ContextOutcome", "ContextRunner"]


@dataclass
class ContextOutcome:
    """What a pre-run check raised (``None``: it returned) and how long it took."""

    error: BaseException | None = None
    close_error: BaseException | None = None
    seconds: float = 0.0


class _Closes(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closes)


class ContextRunner(PreRunner[ContextOutcome], Generic[C]):
    """The pytest plugin that pre-runs this process's checks taking the one fixture
    ``fixture`` and replays them.

    ``needs(item)`` is what a check needs of the scheduler (``None``: not a check);
    ``make_context(item)`` builds a check's fresh context, kept on the item as
    ``context_key`` (its report shows what its command did); ``on_interrupt()`` is
    called on Ctrl-C in the middle of the batch (the suite kills its processes and
    wakes the checks' waits, so the batch ends at once); ``thread`` names the pool's
    threads.
    """

    def __init__(
        self,
        workers: int,
        make_context: Callable[[pytest.Item], C],
        *,
        needs: Callable[[pytest.Item], Needs | None],
        fixture: str,
        context_key: pytest.StashKey[C],
        thread: str,
        on_interrupt: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(workers, on_interrupt)
        self._make_context = make_context
        self._needs = needs
        self._fixture = fixture
        self._key = context_key
        self._thread = thread

    def _runnable(self, item: pytest.Item) -> bool:
        if not isinstance(item, pytest.Function) or self._needs(item) is None:
            return False
        return tuple(item._fixtureinfo.argnames) == (self._fixture,)

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """Replay the stored outcome of a check (pre-running them all first)."""
        if not self._runnable(pyfuncitem):
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
            i
            for i in [first, *upcoming(first)]
            if self._runnable(i) and i.nodeid not in self._outcomes
        ]
        phases = Phases()
        for item in batch:
            needs = self._needs(item)
            assert needs is not None and isinstance(item, pytest.Function)  # _runnable
            phases.add(item, needs)

        def one(item: pytest.Function, _stage: Stage) -> None:
            outcome = ContextOutcome()
            began = time.perf_counter()
            try:
                conf = self._make_context(item)
            except BaseException as err:
                outcome.error = err
            else:
                item.stash[self._key] = conf  # the report shows what its command did
                try:
                    item.obj(**{self._fixture: conf})
                except BaseException as err:  # stored, re-raised by the item's call
                    outcome.error = err
                try:
                    conf.close()
                except BaseException as err:
                    outcome.close_error = err
            outcome.seconds = time.perf_counter() - began
            self._keep(item, outcome)

        self._run(phases, one, self._thread)
