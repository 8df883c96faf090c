"""The time scale: the system's durations, run faster than life."""

from __future__ import annotations

import random

import pytest

from pytest_osfoundry.agent import every, wait_then_every
from pytest_osfoundry.engine import LogNormal
from pytest_osfoundry.load._rhythm import Rhythm, Scaled


def test_real_time_leaves_everything_as_the_spec_states_it() -> None:
    rhythm = Rhythm()
    assert rhythm.pass_interval == 20.0
    strategy = every(5)
    assert rhythm.strategy(strategy) is strategy
    duration = rhythm.graph().duration
    assert isinstance(duration, LogNormal)
    assert (duration.median, duration.minimum) == (60.0, 5.0)


def test_a_scale_multiplies_every_duration_and_the_strategy_sees_system_time() -> None:
    rhythm = Rhythm(scale=0.025)
    assert rhythm.pass_interval == pytest.approx(0.5)
    assert rhythm.wall(3.0) == pytest.approx(0.075)
    duration = rhythm.graph().duration
    assert isinstance(duration, LogNormal)
    assert duration.median == pytest.approx(1.5) and duration.minimum == pytest.approx(0.125)
    scaled = rhythm.strategy(wait_then_every(20, 10))
    assert isinstance(scaled, Scaled)
    assert scaled(0, 0.0) == pytest.approx(0.5)  # the first wait: 20 system seconds
    assert scaled(1, 0.5) == pytest.approx(0.25)
    assert all(rhythm.graph().sample_duration(random.Random(i)) >= 0.125 for i in range(50))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scale": 0}, "time scale must be > 0"),
        ({"scale": 1001}, "at most 1000"),
        ({"graph_median": 2.0, "graph_minimum": 5.0}, "must not exceed graph_median"),
        ({"cancel_share": 1.5}, "cancel_share"),
        ({"interval": 0}, "interval"),
    ],
)
def test_bad_rhythms_are_refused(kwargs, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        Rhythm(**kwargs)
