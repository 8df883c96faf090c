"""Running the checks concurrently in one process (``--osf-concurrency N``).

The checks spend their time waiting on the network, so when the first check of a
batch is about to run, :class:`ConcurrentRunner` runs every check still to come in
this process in a thread pool -- each with its own fresh
:class:`~pytest_osfoundry.conformance._harness.Conformance` context, closed after it
-- and stores each outcome (returned, or the exception raised, pytest's skip and fail
outcomes included). Each item's call then *replays* its stored outcome, in pytest's
usual order, so reports, xfail/baseline handling, ``-x``, ``-k``, ``--lf``, JUnit XML
and the terminal summary are those of a serial run (apart from timings). Under xdist
each worker pre-runs the items it has been given.

Isolation: a check whose :class:`~pytest_osfoundry.conformance._registry.CheckInfo`
is ``exclusive`` (its evidence depends on time: a race, latencies) runs alone, once
the concurrent ones of its batch have ended; a ``last`` one (it judges what the whole
process received) runs after those, alongside the other ``last`` ones. Each of them
has a thread and a :mod:`~pytest_osfoundry.conformance._stages` stage of its own from
the start of the batch, so one declared ``waits_within`` does its other work
meanwhile and waits only around the part that needs it. Every other check
shares the fixed session list (:mod:`~pytest_osfoundry.conformance._sessions`) and
judges only its own command ids; the few that share another list hold it meanwhile
(:mod:`~pytest_osfoundry.conformance._holds`), so they run concurrently too.
The concurrent ones start with the list's holders, then longest first
(:mod:`~pytest_osfoundry.conformance._weights`).

``--osf-concurrency 1`` turns this off: every check runs in pytest's own call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_osfoundry.conformance._crowding import InFlight, amend
from pytest_osfoundry.conformance._harness import Conformance
from pytest_osfoundry.conformance._liveness import liveness_of
from pytest_osfoundry.conformance._registry import CheckInfo, check_info
from pytest_osfoundry.conformance._stages import Interrupted, Stage, Stages, Treatment
from pytest_osfoundry.conformance._weights import order_key

__all__ = ["RUNNER_PLUGIN", "ConcurrentRunner", "Outcome", "Phases", "run_check", "run_phases"]

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


@dataclass
class Phases:
    """A batch of checks filed by the phase their :class:`CheckInfo` asks for.

    ``waits_within`` says whether the runner's contexts let a check wait in its own
    body (the server suite's :class:`Conformance` does); without it, a check declared
    ``waits_within`` is waited for whole, like any exclusive or ``last`` check.
    """

    concurrent: list[pytest.Function] = field(default_factory=list)
    alone: list[pytest.Function] = field(default_factory=list)
    last: list[pytest.Function] = field(default_factory=list)
    waits_within: bool = False
    within: set[str] = field(default_factory=set)
    """The node ids of the checks that wait in their own body."""
    _order: dict[str, tuple[bool, int]] = field(default_factory=dict)

    def add(self, item: pytest.Function, info: CheckInfo) -> None:
        """File ``item`` under the phase its check asks for."""
        phase = self.alone if info.exclusive else self.last if info.last else self.concurrent
        phase.append(item)
        if self.waits_within and info.waits_within and phase is not self.concurrent:
            self.within.add(item.nodeid)
        self._order[item.nodeid] = order_key(info.check_id)

    def longest_first(self) -> None:
        """Order the concurrent checks: those holding the shared list first, then by the
        requests they send, most first (:mod:`~pytest_osfoundry.conformance._weights`;
        ties keep their order)."""
        self.concurrent.sort(key=lambda item: self._order.get(item.nodeid, (True, 0)))


def run_phases(
    phases: Phases, one: Callable[[pytest.Function, Stage], None], workers: int, name: str
) -> None:
    """Run ``one`` on every item of ``phases``, never more than ``workers`` at work at
    once: the concurrent ones in a pool; each exclusive and ``last`` one in a thread of
    its own from the start, where it waits at its stage
    (:mod:`~pytest_osfoundry.conformance._stages`, a wait lets its slot go): the
    exclusive ones alone once nothing else runs, one by one, then the ``last`` ones
    alongside each other -- whole, or (those in ``phases.within``) only where their body
    says. Used by the server suite and the relay suite alike; ``name`` prefixes the
    threads' names. ``one`` gets the item and its stage, and must not raise."""
    stages = Stages(workers)
    treatments: list[tuple[pytest.Function, Treatment]] = [
        *[(item, "pool") for item in phases.concurrent],
        *[(item, "alone") for item in phases.alone],
        *[(item, "last") for item in phases.last],
    ]
    # Every check is counted before any starts: "nothing else runs" must not be true
    # merely because the pool has not begun yet.
    joined = {item.nodeid: stages.join(treatment) for item, treatment in treatments}

    def staged(item: pytest.Function) -> None:
        stage = joined[item.nodeid]
        try:
            if stage.treatment == "alone" and item.nodeid not in phases.within:
                with stage.alone(), stage.running():
                    one(item, stage)
                return
            if stage.treatment == "last" and item.nodeid not in phases.within:
                stage.after_the_rest()
            with stage.running():
                one(item, stage)
        except Interrupted:  # Ctrl-C while it waited: it never ran
            pass
        finally:
            stage.ended()

    threads = [
        threading.Thread(target=staged, args=(item,), name=f"{name}-{treatment}", daemon=True)
        for item, treatment in treatments
        if treatment != "pool"
    ]
    for thread in threads:
        thread.start()
    try:
        _in_pool(staged, phases.concurrent, workers, name)
        for thread in threads:
            thread.join()
    except BaseException:  # interrupted: wake the waiting ones, let the running ones end
        stages.abort()
        for thread in threads:
            thread.join()
        raise


def _in_pool(
    one: Callable[[pytest.Function], None], items: list[pytest.Function], workers: int, name: str
) -> None:
    """Run ``one`` on every item, ``workers`` at a time; return when all have ended."""
    if not items:
        return
    pool = ThreadPoolExecutor(workers, thread_name_prefix=name)
    try:
        for future in [pool.submit(one, item) for item in items]:
            future.result()
    finally:  # interrupted (Ctrl-C): start no more checks, let running ones end
        pool.shutdown(wait=True, cancel_futures=True)


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
    (:mod:`~pytest_osfoundry.conformance._crowding`); nothing is retried.
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
            outcome.error = _undeclared_wait(conf)
    try:
        conf.close()
    except BaseException as err:  # stored, re-raised at the item's teardown
        outcome.close_error = err
    outcome.seconds = time.perf_counter() - start
    return outcome


def _undeclared_wait(conf: Conformance) -> TypeError | None:
    """The error of a check declared ``waits_within`` that returned without waiting at
    its stage (it ran alongside the others where it promised not to), or ``None``."""
    info = conf.info
    if not info.waits_within or conf.stage.waited:
        return None
    call = "with c.alone():" if info.exclusive else "c.after_the_rest()"
    return TypeError(
        f"check {info.check_id} is declared waits_within=True but returned without "
        f"{call}: it ran alongside the other checks; wait where its evidence needs it"
    )


class ConcurrentRunner:
    """The pytest plugin that pre-runs the checks of this process and replays them.

    ``make_context(item, target)`` builds a check's fresh context; ``attach(item, conf)``
    hands the pre-run context to the reporting (exchanges, notes, request count).
    """

    def __init__(
        self,
        workers: int,
        make_context: Callable[[pytest.Item, Any], Conformance],
        attach: Callable[[pytest.Item, Conformance], None],
    ) -> None:
        if workers < 2:
            raise ValueError("a concurrent runner needs at least 2 workers")
        self.workers = workers
        self._make_context = make_context
        self._attach = attach
        self._outcomes: dict[str, Outcome] = {}
        self._lock = threading.Lock()
        self._in_flight = InFlight()

    # ------------------------------------------------------------------ hooks
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
            outcome = self._outcomes.get(pyfuncitem.nodeid)
            if outcome is None:  # pragma: no cover - _prerun always includes the item
                return None
        self._attach(pyfuncitem, outcome.conf)
        if outcome.error is not None:
            raise outcome.error
        return True

    def context_of(self, item: pytest.Item) -> Conformance | None:
        """The context ``item``'s check ran with in the pre-run (closed already), or
        ``None`` when it has not run yet (the batch's first) or is not pre-run."""
        outcome = self._outcomes.get(item.nodeid)
        return None if outcome is None else outcome.conf

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Re-raise what closing a pre-run check's context raised (a teardown error)."""
        outcome = self._outcomes.pop(item.nodeid, None)
        if outcome is not None and outcome.close_error is not None:
            raise outcome.close_error

    # ------------------------------------------------------------------ pre-running
    def _prerun(self, first: pytest.Function, target: Any) -> None:
        plan = Phases(waits_within=True)
        for item in [first, *_upcoming(first)]:
            info = _runnable(item)
            if info is None or item.nodeid in self._outcomes:
                continue
            assert isinstance(item, pytest.Function)
            plan.add(item, info)
        plan.longest_first()

        def one(item: pytest.Function, stage: Stage) -> None:
            conf = self._make_context(item, target)
            stage.idle = self._in_flight.idle  # its waits from here on are not in flight
            conf.stage = stage
            outcome = run_check(item, conf, self._in_flight, self.workers)
            with self._lock:
                self._outcomes[item.nodeid] = outcome

        liveness_of(target)  # made once here, not raced for by the checks' threads
        run_phases(plan, one, self.workers, "osf-check")


def _upcoming(item: pytest.Item) -> Iterable[pytest.Item]:
    """The items this process will run after ``item``: the rest of the session's items,
    or under xdist the ones the worker has been handed so far."""
    session = item.session
    queue = _xdist_queue(item.config)
    if queue is None:
        items = session.items
        try:
            return items[items.index(item) + 1 :]
        except ValueError:
            return []
    return [session.items[i] for i in queue if 0 <= i < len(session.items)]


def _xdist_queue(config: pytest.Config) -> list[int] | None:
    """The indices of the items an xdist worker has been given and not yet run, or
    ``None`` outside a worker."""
    if not hasattr(config, "workerinput"):
        return None
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index"):
            continue
        indices: list[int] = []
        nxt = getattr(plugin, "nextitem_index", None)
        if isinstance(nxt, int):
            indices.append(nxt)
        try:
            with torun.lock() as queue:
                indices += [i for i in queue if isinstance(i, int)]
        except Exception:  # an xdist without this queue: run what is known
            pass
        return indices
    return []
