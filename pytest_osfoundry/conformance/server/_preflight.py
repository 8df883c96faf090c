"""Preflight: one cheap request per given credential before any check runs.

A wrong token, project id or URL would otherwise show up as dozens of failed checks
blamed on the server. :func:`preflight` asks the target, once, what each role can do:

* the target answers MCP (reachable, and an MCP endpoint at all): a modern
  ``server/discover`` first, ``initialize`` when it answers as a legacy server would
  (a target that answers nothing within ``--osf-timeout`` is refused after that one
  deadline, not asked again);
* a pinned ``--osf-protocol`` is a revision the target serves (else every check
  would fail on a session the server never opens);
* each agent token (agent, other agent, read-only) can list the sessions of
  ``--osf-project-id`` (``list_graph_sessions``, the cheapest read);
* the stranger token can list the sessions of ``--osf-stranger-project-id`` (or at
  least is not refused when given alone);
* each desktop token reaches the relay API: asking for the control state of a
  command that does not exist must be answered "not found", not 401/403 (nothing is
  synced, started or stored).

The roles are checked concurrently (after the target itself); the first problem in
role order is raised as :class:`PreflightError`, whose message names
the option to fix and what the server said. Anything the preflight cannot classify
as a configuration error (an odd but well-formed answer) is left to the checks:
judging the server is their job, not this one's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from pytest_osfoundry.client import (
    DeadlineExceeded,
    HttpStatusError,
    JsonRpcError,
    McpClient,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    Transport,
    mask_token,
)
from pytest_osfoundry.conformance.expected import RELAY_PREFIX
from pytest_osfoundry.conformance.scheduling._internal import Interrupted
from pytest_osfoundry.conformance.server._eras import served_revisions
from pytest_osfoundry.conformance.server._target import Target

__all__ = ["PreflightError", "Role", "preflight", "roles_of"]

_LIST = "list_graph_sessions"
_REFUSED = (401, 403)


class PreflightError(Exception):
    """A configuration error found before the run; the message names the option."""


@dataclass(frozen=True)
class Role:
    """One credential the suite will play, and how to test it cheaply."""

    option: str
    token: str
    kind: str  # "agent" or "desktop"
    project_id: str | None = None
    project_option: str | None = None


def roles_of(target: Target) -> list[Role]:
    """The roles to test, in the order a user would fix them."""
    c = target.creds
    roles: list[Role] = []
    for option, token in (
        ("--osf-agent-token", c.agent_token),
        ("--osf-other-agent-token", c.other_agent_token),
        ("--osf-read-token", c.read_token),
    ):
        if token:
            roles.append(Role(option, token, "agent", c.project_id, "--osf-project-id"))
    if c.desktop_token:
        roles.append(Role("--osf-desktop-token", c.desktop_token, "desktop"))
    if c.stranger_token:
        roles.append(
            Role(
                "--osf-stranger-token",
                c.stranger_token,
                "agent",
                c.stranger_project_id,
                "--osf-stranger-project-id",
            )
        )
    if c.stranger_desktop_token:
        roles.append(Role("--osf-stranger-desktop-token", c.stranger_desktop_token, "desktop"))
    return roles


def preflight(target: Target, protocol: str = "auto") -> None:
    """Check the target and every given credential with one cheap request each, and
    that ``protocol`` (``--osf-protocol``), when pinned, is a revision it serves.

    Raises:
        PreflightError: the target cannot be reached or is not an MCP endpoint, or a
            credential or project id is refused; the message says which option.
    """
    secrets = tuple(target.creds.secrets())

    def mask(text: str) -> str:
        return mask_token(text, secrets) if secrets else text

    transport = target.transport
    roles = roles_of(target)
    first_agent = next((r for r in roles if r.kind == "agent"), None)
    # The era the target's first answer showed is every role's: their clients start in
    # it instead of each probing again (one round trip fewer against a far target).
    eras: dict[str, str] = {}
    _check_mcp(target, transport, first_agent, mask, eras)
    _check_protocol(target, protocol)
    checks = [
        partial(_check_agent, target, transport, r, mask, eras)
        if r.kind == "agent"
        else partial(_check_desktop, target, transport, r, mask)
        for r in roles
    ]
    if len(checks) < 2:
        for one in checks:
            one()
        return
    # The roles' requests are independent: sent at once, so a far-away target costs one
    # role's round trips, not all of them in a row (issue 23). The first problem is
    # still the first role's, in the order above (the message does not depend on timing).
    with ThreadPoolExecutor(len(checks), thread_name_prefix="osf-preflight") as pool:
        futures = [pool.submit(one) for one in checks]
    for future in futures:
        future.result()


def _check_mcp(
    target: Target,
    transport: Transport,
    role: Role | None,
    mask: Callable[[str], str],
    eras: dict[str, str],
) -> None:
    client = McpClient(transport, target.mcp_url, role.token if role else None, era_cache=eras)
    where = f"--osf-target {target.label}"
    try:
        _connect(client)
    except ReplyLost as err:
        raise PreflightError(
            f"{where}: cannot reach it ({mask(str(err))}); is the server up, and is "
            "--osf-target the URL of its MCP endpoint?"
        ) from None
    except HttpStatusError as err:
        if err.status in _REFUSED and role is not None:
            raise PreflightError(
                f"{role.option}: the server refused it at MCP initialize "
                f"(HTTP {err.status}: {_said(err, mask)})"
            ) from None
        if err.status in _REFUSED:
            return  # alive and asking for a token; the roles are checked next
        raise PreflightError(
            f"{where} is not an MCP endpoint: an MCP initialize request was answered "
            f"HTTP {err.status} ({_said(err, mask)})"
        ) from None
    except (ProtocolViolation, JsonRpcError) as err:
        raise PreflightError(
            f"{where} is not an MCP endpoint: its answer to an MCP initialize request "
            f"is not one ({mask(str(err))})"
        ) from None
    except OsfClientError as err:
        raise PreflightError(f"{where}: MCP initialize failed ({mask(str(err))})") from None


def _connect(client: McpClient) -> None:
    """Settle ``client``'s era: discover first, ``initialize`` on a legacy answer -- or
    when the modern probe's connection ended without one (a server dropping what it
    cannot read). Not after a time-out: the target had its whole deadline, and asking
    again would make the user wait two (``--osf-timeout`` is the wait, ``docs/choices.md``)."""
    try:
        client.connect()
    except DeadlineExceeded:
        raise
    except ReplyLost:
        client.initialize()


def _check_protocol(target: Target, protocol: str) -> None:
    """A pinned ``--osf-protocol`` must be one the target serves (found as the checks
    find it, :func:`~pytest_osfoundry.conformance.server._eras.served_revisions`)."""
    if protocol == "auto":
        return
    try:
        served = served_revisions(target).served
    except Interrupted as err:  # the target fell silent meanwhile
        raise PreflightError(f"--osf-target {target.label}: {err}") from None
    if protocol not in served:
        raise PreflightError(
            f"--osf-protocol {protocol}: the target does not serve it (it serves "
            f"{', '.join(served) or 'no MCP revision the suite knows'}); pin one of those "
            "or use --osf-protocol auto"
        )


def _said(err: HttpStatusError, mask: Callable[[str], str]) -> str:
    text = " ".join(err.body.decode("utf-8", "replace").split())
    if len(text) > 160:
        text = text[:160] + "..."
    return mask(text) or "empty body"


def _check_agent(
    target: Target,
    transport: Transport,
    role: Role,
    mask: Callable[[str], str],
    eras: dict[str, str],
) -> None:
    client = McpClient(transport, target.mcp_url, role.token, era_cache=eras)
    try:
        _connect(client)
        if role.project_id is None:
            return  # nothing cheap to ask without a project; the checks that need it skip
        result = client.rpc(
            "tools/call", {"name": _LIST, "arguments": {"project_id": role.project_id}}
        )
    except ReplyLost as err:
        raise PreflightError(
            f"--osf-target {target.label}: no reply to {role.option}'s request ({mask(str(err))})"
        ) from None
    except HttpStatusError as err:
        if err.status in _REFUSED:
            raise PreflightError(
                f"{role.option}: the server refused it ({_LIST} answered HTTP {err.status}: "
                f"{_said(err, mask)})"
            ) from None
        return  # an odd status is the checks' business
    except OsfClientError:
        return  # a malformed answer is the checks' business
    if isinstance(result, dict) and result.get("isError") is True:
        raise PreflightError(
            f"{role.project_option}: {_LIST} of project {role.project_id!r} as "
            f"{role.option} was refused: {mask(_tool_text(result))}"
        )


def _tool_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                return " ".join(part["text"].split())[:200]
    return "a tool error without text"


def _check_desktop(
    target: Target, transport: Transport, role: Role, mask: Callable[[str], str]
) -> None:
    url = f"{target.relay_url.rstrip('/')}{RELAY_PREFIX}/commands/{uuid.uuid4()}/control"
    headers = {"Accept": "application/json", "Authorization": f"Bearer {role.token}"}
    try:
        reply = transport.request("GET", url, headers, b"")
    except OsfClientError as err:
        raise PreflightError(
            f"--osf-relay-url {target.relay_url}: cannot reach the relay API as "
            f"{role.option} ({mask(str(err))})"
        ) from None
    if reply.status in _REFUSED:
        text = " ".join(reply.body.decode("utf-8", "replace").split())[:160]
        raise PreflightError(
            f"{role.option}: the relay API refused it (HTTP {reply.status}: "
            f"{mask(text) or 'empty body'})"
        )
