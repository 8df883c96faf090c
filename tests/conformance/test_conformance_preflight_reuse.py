"""The checks go on with the target the preflight reached (issue 23): its connections
and what it found out about the target (the revision the checks speak, settled while
the roles are checked) are kept, so a far-away target pays for reaching it once, not
once for the preflight and again for the checks."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import LoopbackServer, ReferenceServer
from pytest_osfoundry.server._app import Provisioned
from tests.conformance.osf_conformance_kit import SuiteRun


class _Log(HandlerWrapper[ReferenceServer]):
    """The reference server, noting each JSON-RPC method it was sent."""

    def __init__(self) -> None:
        super().__init__(ReferenceServer())
        self.lock = threading.Lock()
        self.methods: list[str] = []

    def __call__(self, request: Request, /) -> Response:
        try:
            message = json.loads(request.body or b"null")
        except ValueError:
            message = None
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            with self.lock:
                self.methods.append(message["method"])
        return self.inner(request)


@pytest.fixture
def logged() -> Iterator[tuple[_Log, str, Provisioned]]:
    handler = _Log()
    made = handler.inner.provision()
    loop = LoopbackServer(handler)
    try:
        yield handler, loop.origin + "/mcp", made
    finally:
        loop.close()


def test_the_checks_use_the_target_the_preflight_reached(
    run_suite: Callable[..., SuiteRun], logged: tuple[_Log, str, Provisioned]
) -> None:
    handler, url, made = logged
    creds = {
        "agent-token": made.agent_token,
        "other-agent-token": made.other_agent_token,
        "read-token": made.read_token,
        "desktop-token": made.desktop_token,
        "project-id": made.project_id,
    }
    args = [f"--osf-{name}={value}" for name, value in creds.items()]
    preflight_only = run_suite(f"--osf-target={url}", *args, "-k", "no-check-has-this-name")
    assert preflight_only.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    preflight = sorted(handler.methods)
    # the roles go straight to their request: the era is found once, and the checks'
    # revision settled once
    assert preflight.count("server/discover") == 2, preflight
    handler.methods.clear()
    run = run_suite(f"--osf-target={url}", *args, "-k", "D3-exactly-four-tools")
    assert run.outcomes == {"D3-exactly-four-tools": "passed"}, run.text[-2000:]
    # The check sends one tools/list and nothing else: a target resolved anew would
    # probe it with a ping and find out again which revision the checks speak.
    assert "ping" not in handler.methods, handler.methods
    assert sorted(handler.methods) == sorted([*preflight, "tools/list"])
