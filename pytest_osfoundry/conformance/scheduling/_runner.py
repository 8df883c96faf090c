"""Running a suite's checks concurrently in one process, the way every suite shares.

The checks spend their time waiting on the network or on a process, so when the first
check of a batch is about to run, a suite's runner (a :class:`PreRunner`: the server
suite's :mod:`~pytest_osfoundry.conformance.server._runner`, the relay and agent
suites' :mod:`~pytest_osfoundry.conformance.scheduling._contexts`) runs every check still to come
in this process in a thread pool, each with its own fresh context, and stores each
outcome (returned, or the exception raised, pytest's skip and fail outcomes included).
Each item's call then *replays* its stored outcome, in pytest's usual order, so
reports, xfail/baseline handling, ``-x``, ``-k``, ``--lf``, JUnit XML and the terminal
summary are those of a serial run (apart from timings). Under xdist each worker
pre-runs the items it has been given.

Where a check runs is what it declares (``@check(..., schedule=...)``;
:mod:`~pytest_osfoundry.conformance.scheduling._protocol`): one that must run alone
(its evidence is time: a race, latencies) runs once the concurrent ones of its batch
have ended; a ``last`` one (it judges what the whole process received) runs after
those, alongside the other ``last`` ones. Each of them has a thread and a
:mod:`~pytest_osfoundry.conformance.scheduling._waits` stage of its own from the start
of the batch, so one that marks its own part does its other work meanwhile and waits
only around that part. The concurrent ones start in the order their checks declare
(:func:`start_order`): the session list's holders, then the long chains, then the rest
in collection order.

A batch ends one way whatever stops it (:func:`run_phases`, :class:`PreRunner`):
Ctrl-C, or the target found gone, starts no further check, lets the running ones end
for a moment, and replays the outcome of every check that ended; the rest are
reported as not run, by the same path as a serial run's
(:mod:`~pytest_osfoundry.conformance.reporting._outcome`).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import pytest
from _pytest.runner import runtestprotocol

from pytest_osfoundry.conformance.scheduling._protocol import INTERRUPTED, NOT_RUN_PREFIX, Needs
from pytest_osfoundry.conformance.scheduling._waits import Interrupted, Stage, Stages, Treatment

__all__ = [
    "GRACE_SECONDS",
    "Phases",
    "PreRunner",
    "run_phases",
    "start_order",
    "upcoming",
]


def start_order(needs: Needs) -> tuple[bool, bool]:
    """Where a concurrent batch starts a check (smallest first; a stable sort keeps the
    collection order within each place): the checks holding the shared session list
    (``schedule="shares-list"``), then those sending a long chain of requests
    (``"long-chain"``), then the rest.

    The holders go first because while one holds the list every other check's sync
    waits: the holds are best over while the others are still at their first requests,
    and the holders of one list, started together, hold it once instead of once each.
    The long chains go next because a check sends its requests one after another:
    against a far-away server a long chain started last would keep the run waiting
    after everything else had ended (the longest-first rule of scheduling many jobs
    on a few workers). Both are the check's own declarations
    (:mod:`~pytest_osfoundry.conformance.scheduling._protocol`), so a check brings its
    place with it and a project's own checks are scheduled as the rule book's.
    """
    return (not needs.holds_list, not needs.long_chain)


@dataclass
class Phases:
    """A batch of checks filed by the phase their :class:`Needs` ask for.

    ``waits_within`` says whether the runner's contexts let a check wait in its own
    body (the server suite's ``Conformance`` does); without it, a check declared
    ``"alone-within"`` or ``"last-within"`` is waited for whole, like any ``"alone"``
    or ``"last"`` check.
    """

    concurrent: list[pytest.Function] = field(default_factory=list)
    alone: list[pytest.Function] = field(default_factory=list)
    last: list[pytest.Function] = field(default_factory=list)
    waits_within: bool = False
    within: set[str] = field(default_factory=set)
    """The node ids of the checks that wait in their own body."""
    _order: dict[str, tuple[bool, bool]] = field(default_factory=dict)

    def add(self, item: pytest.Function, needs: Needs) -> None:
        """File ``item`` under the phase its check's ``needs`` ask for."""
        phase = self.alone if needs.alone else self.last if needs.last else self.concurrent
        phase.append(item)
        if self.waits_within and needs.waits_within and phase is not self.concurrent:
            self.within.add(item.nodeid)
        self._order[item.nodeid] = start_order(needs)

    def longest_first(self) -> None:
        """Order the concurrent checks by :func:`start_order`: those holding the shared
        list first, then the long chains, then the rest (each in collection order)."""
        self.concurrent.sort(key=lambda item: self._order.get(item.nodeid, (True, True)))


GRACE_SECONDS = 0.5
"""How long a stopped batch waits for the checks running when it stopped (Ctrl-C, the
target gone) before it lets them go: each check still running then is reported as not
run, and its thread (a daemon) holds up neither the run nor the interpreter's exit."""

_POLL_SECONDS = 0.1
"""How often the thread waiting for a batch asks whether it should stop."""


class _Batch:
    """One batch's threads: a pool of daemon workers for the concurrent checks, a daemon
    thread of its own for each exclusive and ``last`` one, and the count of checks
    still running."""

    def __init__(self, workers: int, name: str) -> None:
        self.workers = workers
        self.name = name
        self.halt = threading.Event()
        """Set when the batch stops: no check starts from then on."""
        self._cond = threading.Condition()
        self._unfinished = 0
        """Checks not ended (never started ones included)."""
        self._queue: collections.deque[pytest.Function] = collections.deque()
        """The pool's checks not started yet."""

    def start(
        self,
        run: Callable[[pytest.Function], None],
        pool: list[pytest.Function],
        own: list[tuple[pytest.Function, str]],
    ) -> None:
        """Start every check: ``pool`` through the workers, each of ``own`` in a thread."""
        queue = self._queue
        queue.extend(pool)
        self._unfinished = len(pool) + len(own)

        def finish() -> None:
            with self._cond:
                self._unfinished -= 1
                self._cond.notify_all()

        def work() -> None:
            while True:
                with self._cond:
                    if self.halt.is_set() or not queue:
                        return
                    item = queue.popleft()
                try:
                    run(item)
                finally:
                    finish()

        def alone(item: pytest.Function) -> None:
            try:
                run(item)
            finally:
                finish()

        threads = [
            threading.Thread(target=alone, args=(item,), name=f"{self.name}-{kind}", daemon=True)
            for item, kind in own
        ]
        threads += [
            threading.Thread(target=work, name=f"{self.name}_{n}", daemon=True)
            for n in range(min(self.workers, len(pool)))
        ]
        for thread in threads:
            thread.start()

    def _running(self) -> int:
        """Checks started and not ended (under the condition)."""
        return self._unfinished - len(self._queue)

    def wait(self, stopping: Callable[[], str | None]) -> str | None:
        """Wait until every check has ended, or until ``stopping()`` names a reason to
        stop (then stop); the reason, or ``None``. Ctrl-C comes out as KeyboardInterrupt."""
        while True:
            with self._cond:
                if self._unfinished == 0:
                    return None
                self._cond.wait(_POLL_SECONDS)
            reason = stopping()
            if reason is not None:
                return reason

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Start no more checks; wait up to ``grace`` seconds for the running ones."""
        deadline = time.monotonic() + grace
        with self._cond:
            self.halt.set()
            while self._running() > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)


def run_phases(
    phases: Phases,
    one: Callable[[pytest.Function, Stage], None],
    workers: int,
    name: str,
    *,
    stopping: Callable[[], str | None] = lambda: None,
    on_interrupt: Callable[[], None] = lambda: None,
) -> str | None:
    """Run ``one`` on every item of ``phases``, never more than ``workers`` at work at
    once: the concurrent ones in a pool; each exclusive and ``last`` one in a thread of
    its own from the start, where it waits at its stage
    (:mod:`~pytest_osfoundry.conformance.scheduling._waits`, a wait lets its slot go): the
    exclusive ones alone once nothing else runs, one by one, then the ``last`` ones
    alongside each other -- whole, or (those in ``phases.within``) only where their body
    says. Used by the server suite and the relay suite alike; ``name`` prefixes the
    threads' names. ``one`` gets the item and its stage, and must not raise.

    The one way a batch ends early: once ``stopping()`` names a reason (the target is
    gone), or on Ctrl-C (``on_interrupt()`` is called first: whatever the checks wait
    on lets go of them), no check starts any more, the checks waiting at a stage are
    woken (:class:`~pytest_osfoundry.conformance.scheduling._waits.Interrupted`) and those
    running get :data:`GRACE_SECONDS` to end. Returns the reason the batch stopped
    (``None``: every check ended); Ctrl-C is raised again once the batch stopped.
    """
    stages = Stages(workers)
    treatments: list[tuple[pytest.Function, Treatment]] = [
        *[(item, "pool") for item in phases.concurrent],
        *[(item, "alone") for item in phases.alone],
        *[(item, "last") for item in phases.last],
    ]
    # Every check is counted before any starts: "nothing else runs" must not be true
    # merely because the pool has not begun yet.
    joined = {item.nodeid: stages.join(treatment) for item, treatment in treatments}
    batch = _Batch(workers, name)

    def staged(item: pytest.Function) -> None:
        stage = joined[item.nodeid]
        try:
            if batch.halt.is_set():
                return
            if stage.treatment == "alone" and item.nodeid not in phases.within:
                with stage.alone(), stage.running():
                    one(item, stage)
                return
            if stage.treatment == "last" and item.nodeid not in phases.within:
                stage.after_the_rest()
            with stage.running():
                one(item, stage)
        except Interrupted:  # stopped while it waited: it never ran
            pass
        finally:
            stage.ended()

    try:
        batch.start(staged, phases.concurrent, [(i, t) for i, t in treatments if t != "pool"])
        reason = batch.wait(stopping)
    except KeyboardInterrupt:
        on_interrupt()
        stages.abort()
        batch.stop()
        raise
    if reason is not None:
        stages.abort()
        batch.stop()
    return reason


class _Finished(Protocol):
    """What a pre-run check left: the exceptions its call and its close raised."""

    error: BaseException | None
    close_error: BaseException | None


_O = TypeVar("_O", bound=_Finished)
_NOT_RUN = pytest.StashKey[bool]()
"""Set on an item a stopped batch never ran: its set-up skips, unreported."""


class PreRunner(Generic[_O]):
    """What both suites' runners share: the outcomes of a pre-run batch, replayed in
    pytest's order, and the one way a stopped batch ends.

    A batch stopped (Ctrl-C, the target gone: :func:`run_phases`) keeps the outcome of
    every check that ended and replays those as usual; every other item of the run
    goes through pytest's protocol unreported (its set-up skips, so nothing of it
    runs), and the suite's end reports it as not run with the reason
    (:mod:`~pytest_osfoundry.conformance.reporting._outcome`). Once the loop has replayed what
    ended, Ctrl-C is raised again (pytest's own interrupted ending follows), or a gone
    target fails the run (:meth:`after_loop`).
    """

    def __init__(self, workers: int, on_interrupt: Callable[[], None]) -> None:
        if workers < 2:
            raise ValueError("a concurrent runner needs at least 2 workers")
        self.workers = workers
        self._on_interrupt = on_interrupt
        self._outcomes: dict[str, _O] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.stopped: str | None = None
        """Why the batch stopped before every check ended (``None``: it did not)."""
        self._interrupt: KeyboardInterrupt | None = None

    def _keep(self, item: pytest.Item, outcome: _O) -> None:
        """Store ``outcome``, unless its check was stopped before it ended or the batch
        has let it go."""
        if isinstance(outcome.error, Interrupted):
            return  # stopped mid-way: it did not run
        if isinstance(outcome.close_error, Interrupted):
            outcome.close_error = None  # it ended; only its clean-up was cut short
        with self._lock:
            if not self._closed:
                self._outcomes[item.nodeid] = outcome

    def _run(
        self,
        phases: Phases,
        one: Callable[[pytest.Function, Stage], None],
        name: str,
        stopping: Callable[[], str | None] = lambda: None,
    ) -> None:
        """Run the batch (:func:`run_phases`); keep what ended if it stopped."""
        try:
            reason = run_phases(
                phases,
                one,
                self.workers,
                name,
                stopping=stopping,
                on_interrupt=self._on_interrupt,
            )
        except KeyboardInterrupt as err:
            self._interrupt = err
            reason = INTERRUPTED
        if reason is not None:
            with self._lock:
                self._closed = True  # a check let go of reports nothing later
            self.stopped = reason

    def _replay_or_skip(self, item: pytest.Item) -> _O:
        """``item``'s outcome; a check the stopped batch did not finish is not run."""
        outcome = self._outcomes.get(item.nodeid)
        if outcome is None:
            raise pytest.skip.Exception(NOT_RUN_PREFIX + (self.stopped or "the run stopped"))
        return outcome

    # ------------------------------------------------------------------ hooks
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """Once the batch stopped, take an item that did not end through pytest's
        protocol unreported: its set-up skips before any fixture, its teardown tears
        down what the next item does not need (as pytest's would); nothing of it runs."""
        if self.stopped is None or item.nodeid in self._outcomes:
            return None
        item.stash[_NOT_RUN] = True
        runtestprotocol(item, log=False, nextitem=nextitem)
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Skip the set-up of an item the stopped batch did not run."""
        if item.stash.get(_NOT_RUN, False):
            raise pytest.skip.Exception(NOT_RUN_PREFIX + (self.stopped or "the run stopped"))

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Re-raise what closing a pre-run check's context raised (a teardown error)."""
        outcome = self._outcomes.pop(item.nodeid, None)
        if outcome is not None and outcome.close_error is not None:
            raise outcome.close_error

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """After the loop replayed what ended: Ctrl-C again, or :meth:`after_loop`."""
        result = yield
        if self._interrupt is not None:
            raise self._interrupt
        self.after_loop(session)
        return result

    def after_loop(self, session: pytest.Session) -> None:
        """What the run learns once the loop is over (nothing, by default)."""


def upcoming(item: pytest.Item) -> Iterable[pytest.Item]:
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
