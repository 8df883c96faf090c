"""Fixtures for the reference-server tests (the helpers live in ``osf_server_kit``)."""

from __future__ import annotations

import pytest

from tests.server.osf_server_kit import GS1, Srv, session


@pytest.fixture
def srv() -> Srv:
    """A provisioned server whose project shares one session (GS1); nothing queued."""
    s = Srv()
    s.server.state.share(s.pid, [session(GS1)])
    return s


@pytest.fixture
def bare() -> Srv:
    """A provisioned server with nothing shared yet (D4)."""
    return Srv()
