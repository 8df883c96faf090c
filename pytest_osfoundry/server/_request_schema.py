"""Incoming JSON-RPC requests checked against MCP's schema for their method (R1).

The MCP layer (:mod:`~pytest_osfoundry.server._mcp`) keeps its hand-written checks
where the spec asks for a particular error (a batch, an id of the wrong type, a
modern request's ``_meta`` and headers, an unknown tool); every request that passed
them is then validated here against the revision's ``<Method>Request`` definition
(:mod:`pytest_osfoundry._mcp_schema`), so what nobody thought of writing a check for
(a ``_meta.progressToken`` that is an object, say) is refused too. A violation under
``/params`` is JSON-RPC ``-32602`` Invalid params, any other ``-32600`` Invalid
Request, with a message naming the field; each is logged on the
``pytest_osfoundry.server`` logger (``osfoundry-fake serve`` prints it). The message
quotes what the request sent, so it is masked (the caller's ``mask``: the server's
:meth:`~pytest_osfoundry.server._auth.TokenStore.mask`) before it is logged or answered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._mcp_schema import REVISIONS, definition_names, first_violation

__all__ = ["SchemaRefusal", "refusal"]

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

_REQUESTS = {
    "initialize": "InitializeRequest",
    "ping": "PingRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "server/discover": "DiscoverRequest",
}
_log = logging.getLogger("pytest_osfoundry.server")


def _hand_checked(params: Any) -> bool:
    """Whether the tool-call layer's own check answers this (R3: its own messages for a
    name that is not a string and arguments that are not an object)."""
    if not isinstance(params, dict):
        return False
    arguments = params.get("arguments", {})
    return not isinstance(params.get("name"), str) or not isinstance(arguments, dict)


@dataclass(frozen=True)
class SchemaRefusal:
    """The JSON-RPC error a request that breaks the schema gets."""

    code: int
    message: str


def refusal(
    revision: str, message: dict[str, Any], *, mask: Callable[[str], str]
) -> SchemaRefusal | None:
    """The error for a request ``message`` (its method known to the server) that breaks
    MCP ``revision``'s schema, or ``None`` when it matches (or no definition applies).

    Its message has passed through ``mask`` (it may quote any value the request sent)."""
    definition = _REQUESTS.get(str(message.get("method")))
    if definition is None or revision not in REVISIONS:
        return None
    if definition not in definition_names(revision):  # ping, initialize: not modern methods
        return None
    if definition == "CallToolRequest" and _hand_checked(message.get("params")):
        return None
    found = first_violation(revision, definition, message)
    if found is None:
        return None
    params = found.pointer == "/params" or found.pointer.startswith("/params/")
    kind = "Invalid params" if params else "Invalid Request"
    text = mask(f"{kind}: {message['method']} {found.describe()}")
    _log.warning("refused a request breaking MCP's schema: %s", text)
    return SchemaRefusal(INVALID_PARAMS if params else INVALID_REQUEST, text)
