"""What the relay and agent suites' hooks share: a suite that checks an outside command.

:class:`CommandSuiteHooks` is the one implementation both hook modules
(:mod:`~pytest_osfoundry.conformance.plugin._relay`,
:mod:`~pytest_osfoundry.conformance.plugin._agent`) call, named by the suite (``relay``,
``agent``): its options are ``--osf-NAME-command``, ``--osf-NAME-record`` and
``--osf-NAME-concurrency``, its fixtures ``osf_NAME`` and ``osf_NAME_conf``.

* with the command and no test paths, the run is the installed rule book's folder of
  the suite (after another suite's, when one runs too); a command that cannot be split,
  or a record folder that cannot be written in, ends the run with one line (the reports
  written all the same: :func:`~pytest_osfoundry.conformance.plugin._sessionfinish.refuse`);
* the preflight before any check: a problem is one ``ERROR:`` line and exit status 4,
  the reports written all the same (Ctrl-C during it: exit 2; a crash: exit 3);
* with a concurrency over 1, the checks pre-run in a thread pool
  (:class:`~pytest_osfoundry.conformance.scheduling._contexts.ContextRunner`);
* a check's report tells of what its command had done when the check ended (its
  context frozen); with ``--osf-NAME-record=DIR``, every check's record in
  ``DIR/<check id>.json``, passed or failed;
* Ctrl-C kills every process of the suite and wakes every check's wait at once; at
  the end no process is left (their process groups are killed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.command._internal import CommandError, kill_all
from pytest_osfoundry.conformance.plugin._sessionfinish import refuse, refuse_crash
from pytest_osfoundry.conformance.plugin._stash import SECRETS, SUITE_PATHS, WATCHER
from pytest_osfoundry.conformance.reporting._internal import REFUSED
from pytest_osfoundry.conformance.scheduling._internal import (
    INTERRUPTED,
    ContextRunner,
    Interrupted,
    Needs,
)
from pytest_osfoundry.conformance.suite._internal import CheckInfo, Settings, check_info, checks_dir

__all__ = ["CommandSuiteHooks", "record_folder"]


class _Suite(Protocol):
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


class _Context(Protocol):
    @property
    def tokens(self) -> list[str]: ...
    def freeze(self) -> None: ...
    def close(self) -> None: ...


S = TypeVar("S", bound=_Suite)
C = TypeVar("C", bound=_Context)


def record_folder(option: str, value: str) -> Path:
    """The ``option`` folder ``value`` (``--osf-relay-record``), made if missing; a usage
    error naming what is wrong when it cannot be written in."""
    folder = Path(value)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise pytest.UsageError(f"{option}: {value} is a file; name a folder") from None
    except OSError as err:
        raise pytest.UsageError(
            f"{option}: cannot make the folder {value}: {err.strerror or err}"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"{option}: cannot write in {value} (permission denied)")
    return folder


def _needs(item: pytest.Item) -> Needs | None:
    info = check_info(getattr(item, "obj", None))
    return None if info is None else info.needs


@dataclass(frozen=True)
class CommandSuiteHooks(Generic[S, C]):
    """The hooks' work for the suite ``name`` (see the module).

    ``active(settings)``: the suite runs; ``after(settings)``: another suite runs first;
    ``checks``: its rule book folder; ``split(command)`` raises
    :class:`~pytest_osfoundry.conformance.command._process.CommandError` for a command
    that cannot be split; ``make_suite(settings)`` makes the run's suite,
    ``make_context(suite, info)`` one check's context (kept on its item as
    ``context_key``); ``preflight(suite)`` raises ``preflight_error`` with the problem;
    ``write_record(folder, conf, outcome, message, secrets)`` writes a check's record;
    ``on_freeze(item, conf)`` adds to a check's report when it ends.
    """

    name: str
    active: Callable[[Settings], bool]
    after: Callable[[Settings], bool]
    checks: str
    split: Callable[[str], object]
    make_suite: Callable[[Settings], S]
    make_context: Callable[[S, CheckInfo], C]
    context_key: pytest.StashKey[C]
    preflight: Callable[[S], None]
    preflight_error: type[Exception]
    write_record: Callable[[Path, C, str, str | None, set[str]], object]
    on_freeze: Callable[[pytest.Item, C], None] = lambda item, conf: None
    workers: Callable[[Settings], int] | None = None
    """Checks run at once (default: ``--osf-NAME-concurrency``)."""
    _suite_key: pytest.StashKey[S] = field(default_factory=pytest.StashKey, init=False)
    _record_key: pytest.StashKey[Path] = field(default_factory=pytest.StashKey, init=False)

    @property
    def _runner(self) -> str:
        return f"osfoundry-{self.name}-concurrent"

    def _option(self, settings: Settings, what: str) -> Any:
        return getattr(settings, f"osf_{self.name}_{what}")

    def configure(self, config: pytest.Config) -> None:
        """``pytest_configure``: the suite's paths, its record folder, its runner."""
        settings = Settings.from_config(config)
        if not self.active(settings):
            return
        try:
            self.split(self._option(settings, "command") or "")
        except CommandError as err:
            message = f"--osf-{self.name}-command: {err}"
            refuse(config, f"{REFUSED}{message}", settings)
            raise pytest.UsageError(message) from None
        if self._option(settings, "record"):
            try:
                config.stash[self._record_key] = record_folder(
                    f"--osf-{self.name}-record", self._option(settings, "record")
                )
            except pytest.UsageError as err:
                refuse(config, f"{REFUSED}{err}", settings)
                raise
        source = getattr(config, "args_source", None)
        if source is not None and source != pytest.Config.ArgsSource.ARGS:
            folder = str(checks_dir(self.checks))
            if self.after(settings):  # another suite too: its checks, then these
                config.args.append(folder)
            else:
                config.args[:] = [folder]
            config.stash[SUITE_PATHS] = True
        workers = (
            self.workers(settings) if self.workers else self._option(settings, "concurrency")
        )
        if workers > 1:
            runner = ContextRunner(
                workers,
                lambda item: self.context(item, self.suite(config)),
                needs=_needs,
                fixture=f"osf_{self.name}_conf",
                context_key=self.context_key,
                thread=f"osf-{self.name}-check",
                on_interrupt=config.stash[WATCHER].stop_now,
            )
            config.pluginmanager.register(runner, self._runner)

    def makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        """``pytest_runtest_makereport`` (a wrapper): a check has ended, its context is
        frozen; with ``--osf-NAME-record``, its record is written."""
        conf = item.stash.get(self.context_key, None)
        if conf is not None and call.when == "call":
            conf.freeze()
            self.on_freeze(item, conf)
        result = yield
        folder = item.config.stash.get(self._record_key, None)
        if folder is None or conf is None or call.when != "call":
            return
        report: pytest.TestReport = result.get_result()
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xpassed" if report.passed else "xfailed"
        failure = call.excinfo.value if call.excinfo is not None else None
        message = (str(failure).strip() or type(failure).__name__) if failure is not None else None
        self.write_record(folder, conf, outcome, message, item.config.stash.get(SECRETS, set()))

    def unconfigure(self, config: pytest.Config) -> None:
        """``pytest_unconfigure``: close the run's suite; kill every process still running."""
        suite = config.stash.get(self._suite_key, None)
        if suite is not None:
            suite.close()
        kill_all()
        runner = config.pluginmanager.get_plugin(self._runner)
        if runner is not None:
            config.pluginmanager.unregister(runner)

    def suite(self, config: pytest.Config) -> S:
        """The run's suite, made on first use (Ctrl-C interrupts it)."""
        suite = config.stash.get(self._suite_key, None)
        if suite is None:
            suite = self.make_suite(Settings.from_config(config))
            config.stash[self._suite_key] = suite
            # Ctrl-C: every process killed, every check's wait woken (the run ends at once).
            config.stash[WATCHER].on_stop(suite.interrupt)
        return suite

    def sessionstart(self, session: pytest.Session) -> None:
        """``pytest_sessionstart``: the preflight, before any check."""
        config = session.config
        settings = Settings.from_config(config)
        if not self.active(settings) or hasattr(config, "workerinput"):
            return
        if config.getoption("collectonly", False):
            return
        name = self.name
        try:
            self.preflight(self.suite(config))
        except self.preflight_error as err:
            # what the command printed may hold a credential of the run's (given it on
            # its command line): the refusal shows none
            secrets: set[str] = config.stash.get(SECRETS, set())
            said = mask_token(str(err), secrets)
            refuse(config, f"the {name} preflight refused the {name} command: {said}", settings)
            raise pytest.UsageError(f"osfoundry {name} preflight: {said}") from None
        except KeyboardInterrupt:
            refuse(config, f"{INTERRUPTED}, during the {name} preflight", settings, exit_status=2)
            raise
        except (pytest.UsageError, pytest.exit.Exception):  # pytest's own ends
            raise
        except Exception as err:  # a crash: pytest's internal error, the reports say so
            refuse_crash(config, f"the {name} preflight", err, settings)
            raise

    def deselect(self, config: pytest.Config, items: list[pytest.Item], opt_in: str) -> None:
        """Deselect the checks that need the option ``opt_in`` (not given)."""
        keep: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            info = check_info(getattr(item, "obj", None))
            (dropped if info is not None and info.opt_in == opt_in else keep).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def suite_fixture(self, config: pytest.Config) -> S:
        """The ``osf_NAME`` fixture's value (skips without the command)."""
        if not self.active(Settings.from_config(config)):
            name = self.name
            pytest.skip(
                f"no {name}: pass --osf-{name}-command=CMD or --osf-{name}-command=embedded"
            )
        return self.suite(config)

    def context(self, item: pytest.Item, suite: S) -> C:
        """A fresh context for the check ``item``; its tokens join the run's secrets,
        so that no report shows them, whatever a failure quotes."""
        info = check_info(getattr(item, "obj", None))
        if info is None:
            raise pytest.UsageError(
                f"osf_{self.name}_conf is only for conformance checks (@check functions)"
            )
        conf = self.make_context(suite, info)
        item.config.stash.setdefault(SECRETS, set()).update(conf.tokens)
        return conf

    def conf_fixture(self, request: pytest.FixtureRequest, suite: S) -> Iterator[C]:
        """The ``osf_NAME_conf`` fixture: a fresh context, closed after the check."""
        conf = self.context(request.node, suite)
        # The report shows what its command did; a check the concurrent runner pre-ran
        # before this set-up keeps the context it ran with.
        request.node.stash.setdefault(self.context_key, conf)
        try:
            yield conf
        finally:
            with contextlib.suppress(Interrupted):
                conf.close()
