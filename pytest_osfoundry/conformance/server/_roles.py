"""Who the suite plays: credentials, and one client per role.

The agents are MCP clients with the agent, other-agent, read-only and stranger
tokens, or none; the owner's desktop is a relay client with the desktop token. A
role whose credential was not given skips the check, naming the option to pass.
"""

from __future__ import annotations

import copy
import itertools
import threading
from typing import Any

import pytest

from pytest_osfoundry.client import McpClient, RelayClient
from pytest_osfoundry.conformance.server._eras import domain_protocol
from pytest_osfoundry.conformance.server._sessions import fixed_sessions
from pytest_osfoundry.conformance.server._target import Target
from pytest_osfoundry.conformance.server._wire import Wire

__all__ = ["Roles"]

# Checks may run concurrently (--osf-concurrency): the shared sessions are set up under
# a lock, and each check gets its own copy of a role's client, whose JSON-RPC ids come
# from a range no other copy uses (MCP forbids reusing an id within a session).
_SESSIONS_LOCK = threading.Lock()
_ID_RANGES = itertools.count(10_000_000, 10_000)

_OPTION_OF = {
    "agent_token": "--osf-agent-token",
    "other_agent_token": "--osf-other-agent-token",
    "read_token": "--osf-read-token",
    "desktop_token": "--osf-desktop-token",
    "project_id": "--osf-project-id",
    "stranger_token": "--osf-stranger-token",
    "stranger_desktop_token": "--osf-stranger-desktop-token",
    "stranger_project_id": "--osf-stranger-project-id",
}


class Roles:
    """The credentials and the clients of one check (all requests through its wire)."""

    def __init__(self, target: Target, wire: Wire) -> None:
        self._target = target
        self._wire = wire
        self._clients: dict[str, McpClient] = {}
        self._relays: dict[str, RelayClient] = {}

    # ------------------------------------------------------------------ credentials
    def need(self, name: str) -> str:
        """The credential ``name`` (a field of
        :class:`~pytest_osfoundry.conformance.server._target.Credentials`); skip the
        check without it."""
        value = getattr(self._target.creds, name)
        if not value:
            flag = _OPTION_OF[name]
            env = flag.lstrip("-").replace("-", "_").upper()
            pytest.skip(f"needs {flag} (or {env})")
        return str(value)

    @property
    def project_id(self) -> str:
        """The project the agents are connected to."""
        return self.need("project_id")

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """The fixed shared sessions of the project (:func:`fixed_sessions`)."""
        return fixed_sessions(self.project_id)

    # ------------------------------------------------------------------ MCP clients
    def mcp(self, token: str | None, protocol: str | None = None) -> McpClient:
        """A new MCP client with ``token`` (``None``: no Authorization header).

        It speaks ``protocol``, by default the domain checks' (``--osf-protocol``;
        ``auto`` is settled once per target by ``_eras.domain_protocol``).
        """
        if protocol is None:
            protocol = domain_protocol(self._target, self._target.protocol)
        return McpClient(self._wire.recorder, self._target.mcp_url, token, protocol=protocol)

    def _role(self, name: str) -> McpClient:
        """The role's MCP client: one initialized session per role and process, used
        through this check's own copy of the client (its recorder, its JSON-RPC ids)."""
        client = self._clients.get(name)
        if client is not None:
            return client
        token = None if name == "anonymous" else self.need(name)
        with _SESSIONS_LOCK:
            shared = self._target.sessions.get(name)
            if shared is None:
                shared = self._wire.initialized(self.mcp(token))
                self._target.sessions[name] = shared
        client = copy.copy(shared)
        client.transport = self._wire.recorder
        client._next_id = next(_ID_RANGES)
        self._clients[name] = client
        return client

    @property
    def agent(self) -> McpClient:
        """The agent (``--osf-agent-token``)."""
        return self._role("agent_token")

    @property
    def other_agent(self) -> McpClient:
        """Another agent of the same account and project (``--osf-other-agent-token``)."""
        return self._role("other_agent_token")

    @property
    def read_agent(self) -> McpClient:
        """An agent with ``osfoundry:read`` only (``--osf-read-token``)."""
        return self._role("read_token")

    @property
    def stranger(self) -> McpClient:
        """An agent of another account (``--osf-stranger-token``)."""
        return self._role("stranger_token")

    @property
    def anonymous(self) -> McpClient:
        """A client sending no token."""
        return self._role("anonymous")

    # ------------------------------------------------------------------ relay clients
    def relay(self, token: str | None) -> RelayClient:
        """A relay client with ``token`` at the target's relay URL."""
        return RelayClient(self._wire.recorder, self._target.relay_url, token)

    @property
    def desktop(self) -> RelayClient:
        """The owner's desktop (``--osf-desktop-token``)."""
        if "desktop" not in self._relays:
            self._relays["desktop"] = self.relay(self.need("desktop_token"))
        return self._relays["desktop"]

    @property
    def stranger_desktop(self) -> RelayClient:
        """Another account's desktop (``--osf-stranger-desktop-token``)."""
        if "stranger" not in self._relays:
            self._relays["stranger"] = self.relay(self.need("stranger_desktop_token"))
        return self._relays["stranger"]
