"""LatenessProbe: how late a process gets to run (a load process's timers, the relay
suite's own stalls)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from pytest_osfoundry._lateness import LatenessProbe


def test_the_probe_keeps_the_worst_lateness() -> None:
    now = [0.0]
    late = iter([0.0, 0.3, 0.05])

    def sleep(seconds: float) -> None:
        now[0] += seconds + next(late)

    probe = LatenessProbe(1.0, sleep=sleep, now=lambda: now[0])
    for _ in range(3):
        probe.tick()
    assert probe.wakes == 3
    assert probe.worst == pytest.approx(0.3)


def test_the_probe_runs_until_stopped() -> None:
    def sleep(_seconds: float) -> None:
        if probe.wakes >= 1:
            probe.stop()

    probe = LatenessProbe(0.5, sleep=sleep, now=lambda: 0.0)
    probe.run()
    assert probe.wakes == 2


def test_a_probe_needs_a_period() -> None:
    with pytest.raises(ValueError, match="period must be > 0"):
        LatenessProbe(0)


def test_a_wake_up_later_than_late_is_a_stall_and_a_punctual_one_is_not() -> None:
    probe = LatenessProbe(0.01, late=0.05)
    probe.woke(10.0, 10.025)  # a little late: the GIL, a busy core
    probe.woke(20.0, 20.5)  # half a second late: the process was not running
    assert probe.worst == pytest.approx(0.5) and probe.wakes == 2
    assert probe.within(0.0, 100.0) == pytest.approx(0.5)
    assert probe.within(20.2, 30.0) == pytest.approx(0.3)  # only the part inside counts
    assert probe.within(20.5, 30.0) == 0.0
    assert probe.within(0.0, 10.1) == 0.0


def test_without_late_nothing_is_a_stall() -> None:
    probe = LatenessProbe(1.0)
    probe.woke(0.0, 100.0)
    assert probe.worst == 100.0 and probe.within(0.0, 200.0) == 0.0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_a_probe_in_a_thread_sees_its_process_stopped() -> None:
    """The process really stopped (SIGSTOP, continued 0.3 s later by a child) is seen."""
    probe = LatenessProbe(0.01, late=0.05, now=time.time)
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    try:
        time.sleep(0.05)
        begin = time.time()
        child = subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)
        child.wait(timeout=10)
        time.sleep(0.1)  # let the probe record its late wake-up
        stalled = probe.within(begin, time.time())
    finally:
        probe.stop()
        thread.join(timeout=1)
    assert stalled >= 0.15, stalled
