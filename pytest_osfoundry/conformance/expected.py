"""What the suite expects: its own copy of every text and figure it asserts (conformance/spec.md).

Public (``docs/extra-checks.md``): error messages, statuses, relay paths, limits,
field lists, scopes, MCP's revisions, codes and header names, and the documented
tool listing. Whatever a check compares a server's answer with is written here once,
and every check -- the rule book's and a project's own -- reads it from here::

    from pytest_osfoundry.conformance.expected import QUEUED, RUN_NOT_FOUND

This module deliberately imports **nothing** from the kit's server, relay or
client: the reference server has its own constants, and if one of them were
wrong, a suite that imported it would mirror the mistake and pass. Keeping an
independent copy means a wrong constant on either side makes the suite fail
against the reference server. When conformance/spec.md changes, change this file by reading
conformance/spec.md, never by copying the server's value.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CANCELLED",
    "CANCEL_FIELDS",
    "COMPLETED",
    "CONTROL_FIELDS",
    "ERROR_LIMIT",
    "FAILED",
    "HEADER_MISMATCH",
    "INSUFFICIENT_SCOPE",
    "INVALID_PARAMS",
    "KEY_CONFLICT",
    "KEY_MAX",
    "KEY_MIN",
    "LEGACY_REVISIONS",
    "LIST_DEFAULT_LIMIT",
    "LIST_MAX_LIMIT",
    "MCP_METHOD_HEADER",
    "MCP_NAME_HEADER",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_SERVER_INFO",
    "META_VERSION",
    "METHOD_NOT_FOUND",
    "MODERN_REVISION",
    "NO_LONGER_SHARED",
    "PARSE_ERROR",
    "POLL_AFTER_SECONDS",
    "PROJECT_NOT_FOUND",
    "PROTOCOL_VERSION_HEADER",
    "QUEUED",
    "READ_SCOPE",
    "RELAY_FIELDS",
    "RELAY_PREFIX",
    "RESULT_LIMIT",
    "RUNNING",
    "RUN_DESCRIPTION",
    "RUN_NOT_FOUND",
    "RUN_SCOPE",
    "SESSION_FIELDS",
    "SESSION_ID_HEADER",
    "SESSION_NOT_FOUND",
    "STARTED_BY_THIS_AGENT",
    "SYNC_MAX_SESSIONS",
    "TERMINAL",
    "TICKET_FIELDS",
    "TOOLS",
    "UNSUPPORTED_VERSION",
    "VIEW_FIELDS",
    "WELL_KNOWN",
]

# ---------------------------------------------------------------------- messages (D5 R3 R5 D13)
RUN_NOT_FOUND: Final = "Graph run not found or access removed"
"""D5/D6/R3: an unknown run, another agent's run, a malformed command id."""
SESSION_NOT_FOUND: Final = "Graph session not found or access removed"
"""R3: a Graph session id that is not shared with the agent's project."""
PROJECT_NOT_FOUND: Final = "Project not found or access removed"
"""R3: a project that does not exist or is not connected to the agent."""
KEY_CONFLICT: Final = "idempotency_key was already used with different arguments"
"""R5: a key reused with other arguments or for another session."""
NO_LONGER_SHARED: Final = "Graph session is no longer shared with this project"
"""D13: the error of the relay's re-check cancellation."""

# ---------------------------------------------------------------------- statuses (R6)
QUEUED: Final = "queued"
RUNNING: Final = "running"
COMPLETED: Final = "completed"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
TERMINAL: Final = frozenset({COMPLETED, FAILED, CANCELLED})
"""Statuses a run never leaves."""

# ---------------------------------------------------------------------- relay API (D10 R9-R13)
RELAY_PREFIX: Final = "/external-assistants/graph-relays"
"""Where the relay API lives below the relay URL: ``{prefix}/sync`` and
``{prefix}/commands/{command_id}/{start|control|complete}``."""
SYNC_MAX_SESSIONS: Final = 100
"""D10: the most sessions one sync may carry."""

# ---------------------------------------------------------------------- limits (D7 D18 R4 R6 R8)
RESULT_LIMIT: Final = 100_000
"""D18/R11: the most UTF-16 code units ``JSON.stringify`` of a completion may have."""
ERROR_LIMIT: Final = 2000
"""R6: the most characters of a run's ``error`` a server serves."""
KEY_MIN: Final = 8
KEY_MAX: Final = 128
"""D7: the idempotency key's length bounds."""
POLL_AFTER_SECONDS: Final = 20
"""R4: the ticket's ``poll_after_seconds`` (the desktop's poll interval)."""
LIST_DEFAULT_LIMIT: Final = 50
"""R8: sessions listed when ``limit`` is not given."""
LIST_MAX_LIMIT: Final = 50
"""D3: the largest ``limit`` list_graph_sessions takes."""

# ---------------------------------------------------------------------- answers (R4 R6 R8)
TICKET_FIELDS: Final = (
    "command_id",
    "graph_session_id",
    "status",
    "queued_at",
    "poll_after_seconds",
)
VIEW_FIELDS: Final = (
    "command_id",
    "graph_session_id",
    "status",
    "queued_at",
    "started_at",
    "finished_at",
    "cancel_requested",
)
RELAY_FIELDS: Final = (
    "execution_id",
    "result",
    "result_truncated",
    "error",
    "total_tokens",
    "reported_cost",
)
"""R6: the fields of a run view only the relay's completion may set."""
SESSION_FIELDS: Final = ("graph_session_id", "name", "description", "slug", "version", "status")
CANCEL_FIELDS: Final = ("command_id", "status", "cancel_requested")
CONTROL_FIELDS: Final = ("status", "cancel_requested")

# ---------------------------------------------------------------------- tool listing (D3)
TOOLS: Final = ("run_graph_session", "list_graph_sessions", "get_graph_run", "cancel_graph_run")
RUN_DESCRIPTION: Final = (
    "Queue a Graph run on the owner's online desktop in a connected project. Retrieve "
    "progress and result with get_graph_run. The desktop can go offline, and local tool "
    "approvals still apply."
)
STARTED_BY_THIS_AGENT: Final = "started by this Connected agent"
RUN_SCOPE: Final = "osfoundry:run"
READ_SCOPE: Final = "osfoundry:read"

# ---------------------------------------------------------------------- MCP, OAuth (R1 R2)
PARSE_ERROR: Final = -32700
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
HEADER_MISMATCH: Final = -32020
"""R1, MCP 2026-07-28 HeaderMismatch: a header disagrees with the body."""
UNSUPPORTED_VERSION: Final = -32022
"""R1, MCP 2026-07-28 UnsupportedProtocolVersion (``data.supported``, ``data.requested``)."""
MODERN_REVISION: Final = "2026-07-28"
"""R1: the stateless MCP revision (no ``initialize``; the envelope in ``_meta`` and headers)."""
LEGACY_REVISIONS: Final = ("2025-11-25", "2025-06-18")
"""R1: the MCP revisions with an ``initialize`` handshake, newest first."""
PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
SESSION_ID_HEADER: Final = "Mcp-Session-Id"
MCP_METHOD_HEADER: Final = "Mcp-Method"
MCP_NAME_HEADER: Final = "Mcp-Name"
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
"""R2: the protected-resource metadata path (RFC 9728)."""
INSUFFICIENT_SCOPE: Final = "insufficient_scope"
