"""A busy machine is not the relay's fault: the cadence checks' upper bounds are judged
on each gap less the time the suite's own process was kept from running within it
(``StallWatch``, docs/choices.md "A busy machine is not the relay's fault")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from pytest_osfoundry.conformance.relay._harness import RelayConformance, StallWatch


def test_a_late_wake_up_is_a_stall_and_a_punctual_one_is_not() -> None:
    watch = StallWatch()
    watch.woke(10.0, 10.0 + StallWatch.LATE / 2)  # a little late: the GIL, a busy core
    watch.woke(20.0, 20.5)  # half a second late: the process was not running
    assert watch.within(0.0, 100.0) == pytest.approx(0.5)
    assert watch.within(20.2, 30.0) == pytest.approx(0.3)  # only the part inside counts
    assert watch.within(20.5, 30.0) == 0.0
    assert watch.within(0.0, 10.1) == 0.0


def _conf_with(watch: StallWatch) -> RelayConformance:
    return SimpleNamespace(suite=SimpleNamespace(stalls=watch))  # type: ignore[return-value]


def test_the_longest_gap_is_judged_less_the_suite_s_own_stall() -> None:
    polls = [0.0, 0.15, 0.30, 1.03, 1.18]  # one gap of 0.73 s: over 4 x 0.15 s
    watch = StallWatch()
    longest, said = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.73) and longest > 4 * 0.15
    assert said == "longest 0.730 s"
    watch.woke(0.40, 0.95)  # the suite itself was kept from running 0.55 s of it
    longest, said = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.18) and longest <= 4 * 0.15
    assert said == "longest 0.730 s, 0.550 s of it with the suite itself kept from running"


def test_a_stall_elsewhere_excuses_nothing() -> None:
    polls = [0.0, 0.15, 0.30, 1.03, 1.18]
    watch = StallWatch()
    watch.woke(5.0, 9.0)  # long, but not within any gap
    longest, _ = RelayConformance.longest_gap(_conf_with(watch), polls)
    assert longest == pytest.approx(0.73)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_the_watch_sees_its_process_stopped() -> None:
    """The process really stopped (SIGSTOP, continued 0.3 s later by a child) is seen."""
    watch = StallWatch()
    watch.start()
    try:
        time.sleep(0.05)
        begin = time.time()
        child = subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)
        child.wait(timeout=10)
        time.sleep(0.1)  # let the watch thread record its late wake-up
        stalled = watch.within(begin, time.time())
    finally:
        watch.stop()
    assert stalled >= 0.15, stalled
