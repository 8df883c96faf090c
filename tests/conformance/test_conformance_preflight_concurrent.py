"""The preflight checks the roles' credentials at once (issue 23: a far-away target pays
one role's round trips, not all in a row), and still names the first problem in role
order, whatever answers first; the checks then go on with the target it reached."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import LoopbackServer, ReferenceServer
from pytest_osfoundry.server._app import Provisioned
from tests.conformance.osf_conformance_kit import SuiteRun


class _Overlap(HandlerWrapper[ReferenceServer]):
    """The reference server, every answer ``delay`` late (50 ms), counting requests in
    flight and noting each JSON-RPC method it was sent."""

    def __init__(self) -> None:
        super().__init__(ReferenceServer())
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.slow_paths: tuple[str, ...] = ()
        self.delay = 0.05
        self.methods: list[str] = []

    def __call__(self, request: Request, /) -> Response:
        method = _method_of(request.body)
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            if method is not None:
                self.methods.append(method)
        try:
            slow = self.slow_paths and request.path.endswith(self.slow_paths)
            delay = 0.3 if slow else self.delay
            time.sleep(delay)  # holds the request open so that concurrent ones overlap
            return self.inner(request)
        finally:
            with self.lock:
                self.in_flight -= 1


def _method_of(body: bytes) -> str | None:
    try:
        message = json.loads(body or b"null")
    except ValueError:
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


@pytest.fixture
def overlap() -> Iterator[tuple[_Overlap, str, Provisioned]]:
    handler = _Overlap()
    made = handler.inner.provision()
    loop = LoopbackServer(handler)
    try:
        yield handler, loop.origin + "/mcp", made
    finally:
        loop.close()


def _creds(made: Provisioned, **override: str) -> list[str]:
    values = {
        "agent-token": made.agent_token,
        "other-agent-token": made.other_agent_token,
        "read-token": made.read_token,
        "desktop-token": made.desktop_token,
        "project-id": made.project_id,
        **override,
    }
    return [f"--osf-{name}={value}" for name, value in values.items()]


def test_the_roles_are_checked_at_once(
    run_suite: Callable[..., SuiteRun], overlap: tuple[_Overlap, str, Provisioned]
) -> None:
    handler, url, made = overlap
    run = run_suite(f"--osf-target={url}", *_creds(made), "-k", "no-check-has-this-name")
    assert run.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, run.text[-2000:]
    assert handler.most >= 2, "the preflight sent its roles' requests one after another"


def test_the_first_problem_in_role_order_is_named(
    run_suite: Callable[..., SuiteRun], overlap: tuple[_Overlap, str, Provisioned]
) -> None:
    handler, url, made = overlap
    handler.slow_paths = ("/mcp",)  # the other agent's refusal comes back last
    bad = _creds(made, **{"other-agent-token": "wrong-other", "desktop-token": "wrong-desk"})
    run = run_suite(f"--osf-target={url}", *bad)
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.text[-2000:]
    errors = [ln for ln in run.text.splitlines() if ln.startswith("ERROR:")]
    assert len(errors) == 1 and "--osf-other-agent-token: the server refused it" in errors[0]


def test_the_checks_go_on_with_the_target_the_preflight_reached(
    run_suite: Callable[..., SuiteRun], overlap: tuple[_Overlap, str, Provisioned]
) -> None:
    """Its connections and what it found out about the target are kept: a far-away
    target pays for reaching it once."""
    handler, url, made = overlap
    handler.delay = 0.0
    preflight_only = run_suite(f"--osf-target={url}", *_creds(made), "-k", "no-such-check")
    assert preflight_only.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    preflight = sorted(handler.methods)
    handler.methods.clear()
    run = run_suite(f"--osf-target={url}", *_creds(made), "-k", "D3-exactly-four-tools")
    assert run.outcomes == {"D3-exactly-four-tools": "passed"}, run.text[-2000:]
    # The check sends one tools/list, and the run settles the revision its checks
    # speak with one server/discover; a target resolved anew would also probe it first.
    assert "ping" not in handler.methods, handler.methods
    assert sorted(handler.methods) == sorted([*preflight, "tools/list", "server/discover"])


def test_the_roles_start_in_the_era_the_first_answer_showed(
    run_suite: Callable[..., SuiteRun], overlap: tuple[_Overlap, str, Provisioned]
) -> None:
    """One probe of the target's era, not one per role: a far-away target pays two round
    trips for the preflight (the probe, then every role at once), not three."""
    handler, url, made = overlap
    handler.delay = 0.0
    run = run_suite(f"--osf-target={url}", *_creds(made), "-k", "no-such-check")
    assert run.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, run.text[-2000:]
    assert handler.methods.count("server/discover") == 1, handler.methods
    agents = 3  # agent, other agent, read-only: each lists the project's sessions once
    assert handler.methods.count("tools/call") == agents, handler.methods
