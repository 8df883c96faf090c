"""Running relay checks at once in one process (``--osf-relay-concurrency N``).

A relay check spends its time waiting for a relay process, so when the first relay
check of this process is about to run, :class:`RelayConcurrentRunner` runs every
relay check still to come in a thread pool, each with its own context (account,
token, project, driver scenario, relay process group), and stores each outcome.
Each item's call then replays its stored outcome in pytest's usual order, so
reports, baselines, ``-x``, ``-k`` and JUnit XML are those of a serial run (apart
from timings). The phases are the server suite's
(:func:`~pytest_osfoundry.conformance._concurrent.run_phases`): a check marked
``exclusive`` runs alone after the others, one marked ``last`` after those, alongside
the other ``last`` ones, each whole (a relay context has no stage to wait at, so
``waits_within`` changes nothing here). ``--osf-relay-concurrency 1`` turns this off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pytest_osfoundry.conformance._concurrent import Phases, _upcoming, run_phases
from pytest_osfoundry.conformance._registry import check_info
from pytest_osfoundry.conformance._relay_evidence import RELAY_CONF
from pytest_osfoundry.conformance._stages import Stage
from pytest_osfoundry.conformance.relay._harness import RelayConformance

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


class RelayConcurrentRunner:
    """The pytest plugin that pre-runs this process's relay checks and replays them.

    ``make_context(item)`` builds a check's fresh context.
    """

    def __init__(
        self, workers: int, make_context: Callable[[pytest.Item], RelayConformance]
    ) -> None:
        if workers < 2:
            raise ValueError("a concurrent runner needs at least 2 workers")
        self.workers = workers
        self._make_context = make_context
        self._outcomes: dict[str, RelayOutcome] = {}
        self._lock = threading.Lock()

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """Replay the stored outcome of a relay check (pre-running them all first)."""
        if not _runnable(pyfuncitem):
            return None
        if pyfuncitem.nodeid not in self._outcomes:
            self._prerun(pyfuncitem)  # this item and every one still to come here
        outcome = self._outcomes.get(pyfuncitem.nodeid)
        if outcome is None:  # pragma: no cover - _prerun always includes the item
            return None
        if outcome.error is not None:
            raise outcome.error
        return True

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Re-raise what closing a pre-run check's context raised (a teardown error)."""
        outcome = self._outcomes.pop(item.nodeid, None)
        if outcome is not None and outcome.close_error is not None:
            raise outcome.close_error

    def _prerun(self, first: pytest.Function) -> None:
        # The items this process runs from here on (under xdist: those its worker was given).
        batch = [
            i for i in [first, *_upcoming(first)] if _runnable(i) and i.nodeid not in self._outcomes
        ]
        phases = Phases()
        for item in batch:
            info = check_info(getattr(item, "obj", None))
            assert info is not None and isinstance(item, pytest.Function)  # _runnable
            phases.add(item, info)

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
            with self._lock:
                self._outcomes[item.nodeid] = outcome

        run_phases(phases, one, self.workers, "osf-relay-check")
