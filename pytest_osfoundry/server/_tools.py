"""The four MCP tools osFoundry lists (SPEC D3): the single source of truth.

``tools/list`` serves :data:`TOOLS` as they are; ``tools/call`` validates arguments
against the same ``inputSchema`` objects (:func:`argument_error`); the conformance
suite compares a target's listing with them. ``REQUIRED_SCOPE`` is derived from
``securitySchemes``.

jsonschema is the authority on validity and writes every error message. A
precompiled check of the few keywords these schemas use (:func:`surely_valid`)
lets the common, valid call skip it: it only ever says "valid" when jsonschema
would, and otherwise defers to jsonschema.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._vocabulary import (
    CANCEL_GRAPH_RUN,
    GET_GRAPH_RUN,
    LIST_GRAPH_SESSIONS,
    MAX_LIST_LIMIT,
    READ_SCOPE,
    RUN_GRAPH_SESSION,
    RUN_SCOPE,
)
from pytest_osfoundry.server._relay_input import copied

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "CANCEL_GRAPH_RUN",
    "GET_GRAPH_RUN",
    "LIST_GRAPH_SESSIONS",
    "READ_SCOPE",
    "REQUIRED_SCOPE",
    "RUN_GRAPH_SESSION",
    "RUN_SCOPE",
    "TOOLS",
    "TOOL_NAMES",
    "argument_error",
    "surely_valid",
    "tools_listing",
    "validator",
]


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
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT},
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
REQUIRED_SCOPE: dict[str, str] = {t["name"]: t["securitySchemes"][0]["scopes"][0] for t in TOOLS}


@cache
def validator(tool: str) -> Draft202012Validator:
    """``tool``'s compiled JSON Schema 2020-12 validator (built on first use, then kept).

    Raises ``KeyError`` for an unknown tool. jsonschema is imported here, not at
    module import: valid calls never need it (see :func:`surely_valid`).
    """
    from jsonschema import Draft202012Validator

    schema = next((t["inputSchema"] for t in TOOLS if t["name"] == tool), None)
    if schema is None:
        raise KeyError(f"unknown tool {tool!r}")
    return Draft202012Validator(schema)


Check = Callable[[dict[str, Any]], bool]
_SIMPLE_TYPES: dict[str, type] = {"string": str, "object": dict, "integer": int}


def _property_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A strict check for one property's schema; ``None`` if it uses anything else."""
    if set(schema) - {"type", "minLength", "maxLength", "minimum", "maximum"}:
        return None
    kind = _SIMPLE_TYPES.get(schema.get("type", ""))
    if kind is None:
        return None
    lo_len = schema.get("minLength", 0)
    hi_len = schema.get("maxLength")
    lo = schema.get("minimum")
    hi = schema.get("maximum")

    def check(value: Any) -> bool:
        if type(value) is not kind:  # exact: no bool for int, no 5.0 (jsonschema decides)
            return False
        if isinstance(value, str):
            return len(value) >= lo_len and (hi_len is None or len(value) <= hi_len)
        if isinstance(value, int):
            return (lo is None or value >= lo) and (hi is None or value <= hi)
        return True

    return check


def _compile(schema: dict[str, Any]) -> Check:
    """A sound fast path for an object schema; always ``False`` if it cannot be compiled."""
    props = schema.get("properties", {})
    checks = {name: _property_check(sub) for name, sub in props.items()}
    if (
        set(schema) - {"type", "properties", "required", "additionalProperties"}
        or schema.get("type") != "object"
        or schema.get("additionalProperties") is not False
        or any(c is None for c in checks.values())
    ):
        return lambda arguments: False
    required = tuple(schema.get("required", ()))
    compiled = {name: c for name, c in checks.items() if c is not None}

    def surely(arguments: dict[str, Any]) -> bool:
        # Loops, not set algebra or all(): this runs on every tool call.
        for name in required:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            check = compiled.get(name)  # None: not a property (additionalProperties)
            if check is None or not check(value):
                return False
        return True

    return surely


_FAST: dict[str, Check] = {t["name"]: _compile(t["inputSchema"]) for t in TOOLS}


def surely_valid(tool: str, arguments: dict[str, Any]) -> bool:
    """True only when ``arguments`` certainly satisfy ``tool``'s inputSchema (fast)."""
    return _FAST[tool](arguments)


def argument_error(tool: str, arguments: dict[str, Any]) -> str | None:
    """Why ``arguments`` break ``tool``'s inputSchema (jsonschema's first error), or ``None``."""
    if _FAST[tool](arguments):
        return None
    errors = sorted(validator(tool).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    where = "/".join(str(p) for p in errors[0].path) or "arguments"
    return f"Invalid arguments for {tool}: {where}: {errors[0].message}"


def tools_listing() -> list[dict[str, Any]]:
    """A deep copy of :data:`TOOLS`, safe for a caller to mutate or serialise."""
    return [copied(tool) for tool in TOOLS]
