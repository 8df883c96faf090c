"""Locust and gevent never enter a pytest process, nor a process using the fixtures."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("locust", "gevent", "greenlet", "zmq", "pytest_locust")


def test_the_plugin_and_fixtures_import_no_load_and_the_loads_pure_parts_no_locust() -> None:
    code = f"""
import sys
import pytest_osfoundry, pytest_osfoundry.plugin, pytest_osfoundry._fixtures
import pytest_osfoundry.world, pytest_osfoundry._cli
loaded = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})
assert not loaded, loaded
assert 'pytest_osfoundry.load._users' not in sys.modules
assert 'pytest_osfoundry.load._coordination' not in sys.modules
from pytest_osfoundry.load import Accounting, Ledger, StatsTransport, Target, account
import pytest_osfoundry.load._drain, pytest_osfoundry._process_time, pytest_osfoundry.load._rhythm
loaded = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})
assert not loaded, loaded
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_this_pytest_process_has_no_gevent_and_no_locust_plugin(
    pytestconfig: pytest.Config,
) -> None:
    assert not pytestconfig.pluginmanager.has_plugin("locust")
    assert "gevent" not in sys.modules
    assert "locust" not in sys.modules
