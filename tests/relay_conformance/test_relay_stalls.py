"""A busy machine is not the relay's fault: the cadence checks' upper bounds are judged
on each gap less the time the suite's own process was kept from running within it
(a ``LatenessProbe`` with the suite's ``STALL_LATE``; docs/choices.md, "A busy machine
is not the relay's fault")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_osfoundry._lateness import LatenessProbe
from pytest_osfoundry.conformance.command._suite import STALL_LATE, STALL_TICK
from pytest_osfoundry.conformance.relay._harness import RelayConformance


def _conf_with(watch: LatenessProbe) -> RelayConformance:
    return SimpleNamespace(suite=SimpleNamespace(stalls=watch))  # type: ignore[return-value]


def test_the_longest_gap_is_judged_less_the_suite_s_own_stall() -> None:
    polls = [0.0, 0.15, 0.30, 1.03, 1.18]  # one gap of 0.73 s: over 4 x 0.15 s
    watch = LatenessProbe(STALL_TICK, late=STALL_LATE)
    longest, said = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.73) and longest > 4 * 0.15
    assert said == "longest 0.730 s"
    watch.woke(0.40, 0.95)  # the suite itself was kept from running 0.55 s of it
    longest, said = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.18) and longest <= 4 * 0.15
    assert said == "longest 0.730 s, 0.550 s of it with the suite itself kept from running"


def test_a_stall_elsewhere_excuses_nothing() -> None:
    polls = [0.0, 0.15, 0.30, 1.03, 1.18]
    watch = LatenessProbe(STALL_TICK, late=STALL_LATE)
    watch.woke(5.0, 9.0)  # long, but not within any gap
    longest, _ = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.73)


def test_the_shortest_gap_adds_back_a_stall_that_stamped_a_request_late() -> None:
    # R15's lower bound: two refused syncs a pass (0.5 s) apart, the first stamped late
    # because the suite itself was held up: the gap measured is not the relay's.
    syncs = [1.0, 1.3, 1.8]  # measured 0.3 s, then 0.5 s
    watch = LatenessProbe(STALL_TICK, late=STALL_LATE)
    assert RelayConformance.shortest_gap(_conf_with(watch), syncs, 0.5) == pytest.approx(0.3)
    watch.woke(0.8, 1.0)  # held up just before the first was stamped
    assert RelayConformance.shortest_gap(_conf_with(watch), syncs, 0.5) == pytest.approx(0.5)
    assert RelayConformance.shortest_gap(_conf_with(watch), [1.0], 0.5) is None
