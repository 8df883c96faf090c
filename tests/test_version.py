"""The version has one home (the package) and the distribution agrees with it."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

import pytest_osfoundry
from pytest_osfoundry.client._mcp_client import CLIENT_NAME
from pytest_osfoundry.http import Response
from pytest_osfoundry.world import OsfWorld


def test_the_installed_distribution_has_the_packages_version() -> None:
    assert version("pytest-osfoundry") == pytest_osfoundry.__version__


def test_the_reference_server_reports_that_version() -> None:
    client = OsfWorld().agent_client()
    assert client.initialize()["serverInfo"]["version"] == pytest_osfoundry.__version__


def test_the_mcp_client_introduces_itself_with_that_version() -> None:
    client = OsfWorld().agent_client()
    sent: list[bytes] = []
    inner = client.transport

    class Spy:
        def request(self, method: str, url: str, headers: Any, body: bytes) -> Response:
            sent.append(body)
            return inner.request(method, url, headers, body)

    client.transport = Spy()
    client.initialize()
    info = {"name": CLIENT_NAME, "version": pytest_osfoundry.__version__}
    assert json.loads(sent[0])["params"]["clientInfo"] == info
