"""The load generator's health: no frozen time (its timers: tests/test_lateness.py)."""

from __future__ import annotations

import freezegun
import pytest

from pytest_osfoundry._process_time import FrozenTime, refuse_frozen_time


def test_real_time_passes() -> None:
    refuse_frozen_time()


def test_frozen_time_is_refused_and_the_refusal_says_why() -> None:
    with freezegun.freeze_time("2026-01-01"), pytest.raises(FrozenTime) as err:
        refuse_frozen_time()
    assert "freezegun is active" in str(err.value)
    refuse_frozen_time()  # and passes again once the freeze ended
