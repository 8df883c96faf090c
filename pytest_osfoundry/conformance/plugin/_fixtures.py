"""The suite's fixtures: ``osf_target`` (the target, once per process) and ``osf_conf``.

``osf_conf`` is a fresh :class:`~pytest_osfoundry.conformance.server._harness.Conformance`
for the check being run, closed after it; :func:`new_context` makes the same for a
concurrent pre-run (:mod:`~pytest_osfoundry.conformance.scheduling._runner`), and
:func:`attach_context` reports a pre-run's context as the check's own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from pytest_osfoundry.conformance.plugin._stash import (
    CONF,
    PREFLIGHTED,
    SECRETS,
    SETTLED,
    WATCHER,
    run_settings,
)
from pytest_osfoundry.conformance.scheduling._internal import Interrupted
from pytest_osfoundry.conformance.server._internal import (
    RUNNER_PLUGIN,
    ConcurrentRunner,
    Conformance,
    Target,
    TargetError,
    liveness_of,
    probe,
    resolve_target,
    settled_revision,
    stop_if_gone,
)
from pytest_osfoundry.conformance.suite._internal import Settings, check_info

__all__ = ["attach_context", "new_context", "osf_conf", "osf_target"]


@pytest.fixture(scope="session")
def osf_target(pytestconfig: pytest.Config) -> Iterator[Target]:
    """The target under test, resolved once per process (an embedded server is started)."""
    settings = run_settings(pytestconfig)
    if not settings.active:
        pytest.skip("no target: pass --osf-target=URL or --osf-target=embedded")
    problem = None
    try:
        target = _preflighted(pytestconfig) or _resolved(settings)
        target.protocol = settings.osf_protocol
        pytestconfig.stash[SECRETS].update(target.creds.secrets())
    except TargetError as err:
        problem = str(err)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    # Ctrl-C: no request reaches the target any more (the checks and clean-ups end).
    pytestconfig.stash[WATCHER].on_stop(liveness_of(target).stop)
    try:
        yield target
    finally:
        revision = settled_revision(target)
        if revision is not None:
            pytestconfig.stash.setdefault(SETTLED, set()).add(revision)
        target.close()


def _preflighted(config: pytest.Config) -> Target | None:
    """The target this process's preflight reached (it answered), taken once."""
    target = config.stash.get(PREFLIGHTED, None)
    if target is not None:
        del config.stash[PREFLIGHTED]
    return target


def _resolved(settings: Settings) -> Target:
    """A target resolved anew (an xdist worker's), a URL probed once."""
    target = resolve_target(settings)
    if target.kind == "url":
        try:
            probe(target)
        except TargetError:
            target.close()
            raise
    return target


@pytest.fixture
def osf_conf(request: pytest.FixtureRequest, osf_target: Target) -> Iterator[Conformance]:
    """A fresh :class:`Conformance` context for the check being run; ends its runs after.

    A check the concurrent runner has already run gets the context it ran with
    (closed by the runner): making and closing a fresh one it would never use cost
    the suite's run a few per cent against ``embedded``."""
    runner = request.config.pluginmanager.get_plugin(RUNNER_PLUGIN)
    ran = runner.context_of(request.node) if isinstance(runner, ConcurrentRunner) else None
    conf = ran if ran is not None else new_context(request.node, osf_target)
    request.node.stash[CONF] = conf
    try:
        yield conf
    finally:
        if ran is None:
            with contextlib.suppress(Interrupted):  # Ctrl-C: its clean-up is not sent
                conf.close()
        if not (isinstance(runner, ConcurrentRunner) and runner.runs(request.node)):
            stop_if_gone(request.session, osf_target)  # the runner stops its own batch


def new_context(item: pytest.Item, target: Target) -> Conformance:
    """A fresh context for the check of ``item`` (the fixture's, or a pre-run's)."""
    info = check_info(getattr(item, "obj", None))
    if info is None:
        raise pytest.UsageError("osf_conf is only for conformance checks (@check functions)")
    secrets: set[str] = item.config.stash[SECRETS]
    return Conformance(target, info, secrets=tuple(secrets))


def attach_context(item: pytest.Item, conf: Conformance) -> None:
    """Report ``conf`` (a concurrent pre-run's context) as the check's own."""
    item.stash[CONF] = conf
