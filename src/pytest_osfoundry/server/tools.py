"""The four MCP tools osFoundry lists (SPEC D3): the single source of truth.

``tools/list`` serves :data:`TOOLS` as they are; ``tools/call`` validates arguments
against the same ``inputSchema`` objects; the conformance suite compares a target's
listing with them. ``REQUIRED_SCOPE`` is derived from ``securitySchemes``.
"""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator

__all__ = [
    "GET_GRAPH_RUN",
    "CANCEL_GRAPH_RUN",
    "LIST_GRAPH_SESSIONS",
    "RUN_GRAPH_SESSION",
    "READ_SCOPE",
    "REQUIRED_SCOPE",
    "RUN_SCOPE",
    "TOOLS",
    "TOOL_NAMES",
    "VALIDATORS",
    "tools_listing",
]

READ_SCOPE = "osfoundry:read"
RUN_SCOPE = "osfoundry:run"

RUN_GRAPH_SESSION = "run_graph_session"
LIST_GRAPH_SESSIONS = "list_graph_sessions"
GET_GRAPH_RUN = "get_graph_run"
CANCEL_GRAPH_RUN = "cancel_graph_run"


def _security(scope: str) -> list[dict[str, Any]]:
    return [{"type": "oauth2", "scopes": [scope]}]


TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": RUN_GRAPH_SESSION,
        "description": (
            "Queue a Graph run on the owner's online desktop in a connected project. "
            "Retrieve progress and result with get_graph_run. The desktop can go offline, "
            "and local tool approvals still apply."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "graph_session_id": {"type": "string"},
                "arguments": {"type": "object"},
                "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
            },
            "required": ["graph_session_id", "idempotency_key"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "securitySchemes": _security(RUN_SCOPE),
    },
    {
        "name": LIST_GRAPH_SESSIONS,
        "description": (
            "List the Graph sessions the owner shared from the desktop with a connected "
            "project. Reading works anywhere; running a Graph needs the owner's desktop."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "project_id": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["project_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
        "securitySchemes": _security(READ_SCOPE),
    },
    {
        "name": GET_GRAPH_RUN,
        "description": (
            "Get the progress and result of a Graph run started by this Connected agent."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"command_id": {"type": "string"}},
            "required": ["command_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
        "securitySchemes": _security(READ_SCOPE),
    },
    {
        "name": CANCEL_GRAPH_RUN,
        "description": (
            "Cancel a Graph run started by this Connected agent. A queued run is cancelled "
            "at once; a running one stops at the desktop's next control poll."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"command_id": {"type": "string"}},
            "required": ["command_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "securitySchemes": _security(RUN_SCOPE),
    },
)

TOOL_NAMES: tuple[str, ...] = tuple(t["name"] for t in TOOLS)

#: The one scope each tool needs, read off its ``securitySchemes``.
REQUIRED_SCOPE: dict[str, str] = {
    t["name"]: t["securitySchemes"][0]["scopes"][0] for t in TOOLS
}

#: A compiled JSON Schema 2020-12 validator per tool, built once.
VALIDATORS: dict[str, Draft202012Validator] = {
    t["name"]: Draft202012Validator(t["inputSchema"]) for t in TOOLS
}


def tools_listing() -> list[dict[str, Any]]:
    """A deep copy of :data:`TOOLS`, safe for a caller to mutate or serialise."""
    return copy.deepcopy(list(TOOLS))
