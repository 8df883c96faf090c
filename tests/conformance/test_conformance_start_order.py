"""Where a concurrent batch starts each check: what the check declares, no table.

The holders of the shared session list first (``holds_list``), then the long chains of
requests (``long_chain``), then the rest in collection order
(:func:`~pytest_osfoundry.conformance.scheduling._runner.start_order`). A declaration is kept
true by the check itself (``holds_list``: the list may be held only so declared, and a
declared check that never holds fails) or, for ``long_chain``, by a serial run against
the reference server here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest

from pytest_osfoundry.conformance.scheduling._runner import Phases
from pytest_osfoundry.conformance.scheduling._waits import no_stage
from pytest_osfoundry.conformance.server import _runner as _concurrent
from pytest_osfoundry.conformance.server._desktop import Desktop
from pytest_osfoundry.conformance.server._harness import Conformance
from pytest_osfoundry.conformance.suite._registry import CheckInfo, all_checks
from tests.conformance.osf_conformance_kit import SuiteRun, made_info

LONG = 7
"""A check of the pool that sends this many requests or more in a serial run against
the reference server must be declared ``long_chain``."""
SHORT = 4
"""A check declared ``long_chain`` that sends this many or fewer must not be (between
the two, either is right: a check changing by a request does not flip the test)."""


def _pool(info: CheckInfo) -> bool:
    """Whether the batch's pool starts ``info`` (the exclusive and ``last`` checks have
    threads and places of their own)."""
    return not (info.exclusive or info.last)


def test_long_chains_are_declared_where_a_serial_run_sends_them(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite("--osf-target=embedded", "--osf-concurrency=1")
    measured = {c["id"]: c["requests"] for c in run.report["checks"]}
    assert set(measured) == default_ids
    infos = {info.check_id: info for info in all_checks() if info.check_id in measured}
    undeclared = sorted(
        f"{cid} ({n} requests)"
        for cid, n in measured.items()
        if n >= LONG and _pool(infos[cid]) and not infos[cid].long_chain
    )
    stale = sorted(
        f"{cid} ({n} requests)"
        for cid, n in measured.items()
        if n <= SHORT and infos[cid].long_chain
    )
    assert undeclared == [], f"declare @check(..., long_chain=True) on: {undeclared}"
    assert stale == [], f"drop long_chain=True, their chains are short: {stale}"
    # the declarations are what the benchmark's far-away run measured worth having
    declared = {cid for cid, info in infos.items() if info.long_chain}
    assert {"R3-types-null", "R11-concurrent-same-completion"} <= declared


def _item(name: str) -> mock.Mock:
    return mock.Mock(spec=pytest.Function, nodeid=name)


def test_the_pool_starts_holders_then_long_chains_then_the_rest_in_collection_order() -> None:
    infos = [
        made_info("D3-short-one", "queue"),
        made_info("R11-long-one", "queue", schedule="long-chain"),
        made_info("X-ACME-own", "acme"),  # a project's check: the same rules
        made_info("R5-race", "queue", schedule="alone"),
        made_info("D10-holder-one", "queue", schedule="shares-list"),
        made_info("R3-long-two", "queue", schedule="long-chain"),
        made_info("R8-holder-two", "queue", schedule="shares-list"),
        made_info("D4-short-two", "queue"),
    ]
    plan = Phases()
    for info in infos:
        plan.add(_item(info.check_id), info.needs)
    plan.longest_first()
    assert [item.nodeid for item in plan.concurrent] == [
        "D10-holder-one",
        "R8-holder-two",
        "R11-long-one",
        "R3-long-two",
        "D3-short-one",
        "X-ACME-own",
        "D4-short-two",
    ]
    assert [item.nodeid for item in plan.alone] == ["R5-race"]


def test_the_rule_book_declares_its_holders_and_its_long_chains() -> None:
    declared = {i.check_id for i in all_checks() if i.holds_list}
    assert declared == {"R8-default-limit", "D10-sync-replaces", "D10-sync-max-100"}
    assert all(_pool(i) for i in all_checks() if i.long_chain)


def test_only_a_check_declared_holds_list_holds_the_list() -> None:
    conf = Conformance.__new__(Conformance)
    for holds in (False, True):
        info = made_info("R8-probe", "queue", schedule="shares-list" if holds else "alongside")
        desktop = Desktop(mock.Mock(), mock.Mock(), mock.Mock(), mock.Mock(), mock.Mock(), info)
        conf.desktop = desktop
        if holds:
            desktop.changing_list()
            assert desktop.held
        else:
            with pytest.raises(TypeError, match=r'R8-probe .* schedule="shares-list"'):
                desktop.changing_list()
            assert not desktop.held


class _Context:
    """What run_check needs of a check's context: info, stage, desktop, close()."""

    def __init__(self, info: CheckInfo) -> None:
        self.info = info
        self.stage = no_stage()
        self.desktop = mock.Mock(held=False)

    def close(self) -> None:
        pass


def test_a_check_declared_holds_list_that_never_holds_fails_under_concurrency() -> None:
    """The declaration cannot go stale: the batch would start it first for nothing."""
    declared = made_info("R8-declared", "queue", schedule="shares-list")
    item: Any = _item(declared.check_id)
    item.obj = lambda osf_conf: None
    outcome = _concurrent.run_check(item, _Context(declared))  # type: ignore[arg-type]
    assert isinstance(outcome.error, TypeError)
    assert "declared schedule='shares-list' but returned without holding" in str(outcome.error)
    held = _Context(declared)
    held.desktop.held = True
    assert _concurrent.run_check(item, held).error is None  # type: ignore[arg-type]
