"""The load generator's health: no frozen time, timers on time."""

from __future__ import annotations

import freezegun
import pytest

from pytest_osfoundry.load._health import FrozenTime, LatenessProbe, refuse_frozen_time


def test_real_time_passes() -> None:
    refuse_frozen_time()


def test_frozen_time_is_refused_and_the_refusal_says_why() -> None:
    with freezegun.freeze_time("2026-01-01"), pytest.raises(FrozenTime) as err:
        refuse_frozen_time()
    assert "freezegun is active" in str(err.value)
    refuse_frozen_time()  # and passes again once the freeze ended


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
    probe = LatenessProbe(0.5, sleep=lambda s: probe.stop() if probe.wakes >= 1 else None,
                          now=lambda: 0.0)
    probe.run()
    assert probe.wakes == 2


def test_a_probe_needs_a_period() -> None:
    with pytest.raises(ValueError, match="period must be > 0"):
        LatenessProbe(0)
