"""The concurrent checks start longest first (``_weights``, ``Phases.longest_first``).

The table of requests per check is measured, not guessed: a serial run against the
reference server must give every check the figure the table holds.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest

from pytest_osfoundry.conformance._concurrent import Phases
from pytest_osfoundry.conformance._registry import CheckInfo
from pytest_osfoundry.conformance._weights import HOLDERS, REQUESTS, UNLISTED, weight
from tests.conformance.osf_conformance_kit import SuiteRun, made_info


def test_the_table_holds_what_a_serial_run_sends(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite("--osf-target=embedded", "--osf-concurrency=1")
    measured = {c["id"]: c["requests"] for c in run.report["checks"]}
    assert set(measured) == default_ids
    table = "".join(f'    "{k}": {v},\n' for k, v in sorted(measured.items()))
    assert measured == REQUESTS, (
        "REQUESTS in pytest_osfoundry/conformance/_weights.py is stale; put this there:\n"
        + table
    )


def _item(name: str) -> mock.Mock:
    return mock.Mock(spec=pytest.Function, nodeid=name)


def _info(check_id: str, *, exclusive: bool = False) -> CheckInfo:
    return made_info(check_id, "queue", exclusive=exclusive)


def test_the_pool_starts_the_longest_checks_first_ties_in_collection_order() -> None:
    assert weight("X1-unknown-check") == UNLISTED
    short, long_, middle, unknown = (
        "D3-exactly-four-tools",  # 1 request
        "R11-concurrent-same-completion",  # 11
        "D8-cancel-running",  # 6
        "X1-acme-own",  # a project's own: UNLISTED
    )
    assert REQUESTS[short] < UNLISTED < REQUESTS[middle] < REQUESTS[long_]
    plan = Phases()
    names = [short, "D1-run-only-queues", long_, unknown, middle, "R5-concurrent-same-key"]
    for name in names:
        plan.add(_item(name), _info(name, exclusive=name.startswith("R5")))
    plan.longest_first()
    order = [item.nodeid for item in plan.concurrent]
    assert order[:2] == [long_, middle]
    assert order[-1] == short
    # equal figures keep the order they were collected in
    same = [n for n in order if weight(n) == UNLISTED]
    assert same == [n for n in names if n in same]
    assert [item.nodeid for item in plan.alone] == ["R5-concurrent-same-key"]


def test_the_checks_holding_the_list_start_before_the_longest() -> None:
    """While a check holds the shared list every other check's sync waits: the holders
    start first, together, and then the rest longest first."""
    long_ = "R11-concurrent-same-completion"
    assert all(REQUESTS[holder] < REQUESTS[long_] for holder in HOLDERS)
    plan = Phases()
    names = [long_, "D8-cancel-running", *sorted(HOLDERS), "X1-acme-own"]
    for name in reversed(names):
        plan.add(_item(name), _info(name))
    plan.longest_first()
    order = [item.nodeid for item in plan.concurrent]
    assert set(order[: len(HOLDERS)]) == HOLDERS
    assert order[len(HOLDERS) :] == [long_, "D8-cancel-running", "X1-acme-own"]
