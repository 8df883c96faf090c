"""The preflight, in-process against the reference server: each credential in its role."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from pytest_osfoundry._cli import provision_accounts
from pytest_osfoundry.client import HttpTransport
from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.load import Target
from pytest_osfoundry.load._preflight import (
    Check,
    PreflightFailed,
    checks_of,
    preflight,
    unreachable,
)
from pytest_osfoundry.server import LoopbackServer, ReferenceServer


@pytest.fixture
def target() -> Iterator[Target]:
    server = ReferenceServer(RealClock())
    made = provision_accounts(server, 3, 2)
    with LoopbackServer(server, workers=4) as loop:
        yield Target(loop.origin + "/mcp", loop.origin, tuple(made))


def _wire() -> HttpTransport:
    return HttpTransport(timeout=5.0, max_bytes=1 << 20)


def _secrets(target: Target) -> list[str]:
    return [t for a in target.accounts for t in (a.desktop_token, *a.agent_tokens)]


def _with(target: Target, index: int, **change: object) -> Target:
    accounts = list(target.accounts)
    accounts[index] = dataclasses.replace(accounts[index], **change)  # type: ignore[arg-type]
    return dataclasses.replace(target, accounts=tuple(accounts))


def _fails(target: Target, checks: list[Check], secrets: list[str]) -> str:
    with pytest.raises(PreflightFailed) as err:
        preflight(target, checks, _wire)
    text = str(err.value)
    for secret in secrets:
        assert secret not in text
    return text


def test_every_credential_in_its_role_passes(target: Target) -> None:
    preflight(target, checks_of(3, [(0, 0), (1, 0), (2, 0), (0, 1)]), _wire)
    assert unreachable(target, _wire) is None


def test_the_credentials_a_run_uses_are_its_desktops_and_its_agents_tokens() -> None:
    assert checks_of(2, [(0, 0), (1, 0), (0, 0)]) == [Check(0), Check(1), Check(0, 0),
                                                     Check(1, 0)]


def test_swapped_roles_are_refused_by_each_side(target: Target) -> None:
    acc = target.accounts[1]
    swapped = _with(target, 1, desktop_token=acc.agent_tokens[0],
                    agent_tokens=(acc.desktop_token, acc.agent_tokens[1]))
    text = _fails(swapped, checks_of(3, [(1, 0), (1, 1)]), _secrets(target))
    assert text.startswith("2 of the 5 credentials the run uses cannot be used: ")
    assert "account 1's agent token 0 refused (403) by list_graph_sessions" in text
    assert "account 1's desktop token refused (403) by the relay sync" in text


def test_unknown_tokens_are_named_and_counted(target: Target) -> None:
    bad = target
    for i in range(3):
        bad = _with(bad, i, agent_tokens=("osf_unknown-" + "x" * 20, "osf_unknown2" + "y" * 20))
    text = _fails(bad, checks_of(3, [(a, t) for a in range(3) for t in range(2)]),
                  _secrets(bad))
    assert text.startswith("6 of the 9 credentials the run uses cannot be used: ")
    assert "account 0's agent token 0 refused (401)" in text
    assert text.endswith("; and 1 more")


def test_another_owners_desktop_token_is_refused_for_this_project(target: Target) -> None:
    other = target.accounts[2].desktop_token
    text = _fails(_with(target, 1, desktop_token=other), checks_of(2, [(0, 0)]),
                  _secrets(target))
    assert "account 1's desktop token: the relay sync of its project answered 404" in text


def test_a_wrong_path_or_port_ends_at_once(target: Target) -> None:
    wrong = dataclasses.replace(target, relay_url=target.relay_url + "/nowhere")
    text = _fails(wrong, checks_of(3, [(0, 0)]), _secrets(target))
    assert text.startswith("account 0's desktop token: the relay sync of its project answered "
                           "404: the relay_url (")
    closed = dataclasses.replace(target, mcp_url="http://127.0.0.1:9/mcp")
    text = _fails(closed, checks_of(3, [(0, 0)]), _secrets(target))
    assert text.startswith("the mcp_url (http://127.0.0.1:9/mcp) does not answer: ")
    assert unreachable(closed, _wire) is not None
