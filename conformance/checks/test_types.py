"""Type confusion (R3): every property of the four tools, sent with each wrong JSON type.

MCP asks servers to validate every tool input; a validator that coerces (``"1"`` or
``true`` taken for an integer, a JSON *string* taken for an object) queues runs the
agent never asked for. Each ``R3-types-<tool>`` check sends one tool's properties, one
at a time, with every wrong JSON type listed in :data:`WRONG`, the other properties
well-formed; ``R3-types-null`` sends every property of the four tools as ``null``
(:data:`NULL`), which no property's type allows and which a framework's optional
parameters (``dict | None``) take by default. Each call must be refused as R3 allows
(an ``isError`` result or JSON-RPC ``-32602``), and nothing may be queued or cancelled.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.client import ToolReply
from pytest_osfoundry.conformance import Conformance, check, short
from pytest_osfoundry.conformance.expected import INVALID_PARAMS, QUEUED

#: The suite's own copy of D3's property types, tool by tool.
PROPERTIES: dict[str, dict[str, str]] = {
    "run_graph_session": {
        "graph_session_id": "string",
        "idempotency_key": "string",
        "arguments": "object",
    },
    "list_graph_sessions": {"project_id": "string", "limit": "integer"},
    "get_graph_run": {"command_id": "string"},
    "cancel_graph_run": {"command_id": "string"},
}

Values = dict[str, tuple[tuple[str, Any], ...]]
"""JSON type → (what it is called, a value of another JSON type) to send instead."""

#: The values the coercing validators take. The object's JSON-string stand-in is filled
#: in per call (it encodes the probe).
WRONG: Values = {
    "integer": (("a numeric string", "1"), ("a boolean", True)),
    "object": (("a JSON string of an object", ...), ("a number", 1), ("an array", [])),
    "string": (("a number", 1),),
}

#: null, for a property of any type (R3-types-null).
NULL: Values = {kind: (("null", None),) for kind in WRONG}


def _refused(reply: ToolReply) -> bool:
    """Whether ``reply`` refuses a schema violation as R3 allows."""
    if reply.kind == "tool_error":
        return True
    return reply.kind in ("rpc_error", "http_error") and reply.code == INVALID_PARAMS


def _wrong_values(values: Values, kind: str, probe: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(label, json.dumps(probe) if value is ... else value) for label, value in values[kind]]


def _send_each(
    c: Conformance,
    tool: str,
    base: Callable[[], dict[str, Any]],
    send: Callable[[dict[str, Any]], ToolReply],
    values: Values = WRONG,
) -> tuple[list[str], list[dict[str, Any]]]:
    """Send ``tool`` once per property and value of ``values`` for its type (the rest
    from ``base()``); the calls not refused as R3 allows, and the run arguments each
    call meant to queue."""
    accepted: list[str] = []
    meant: list[dict[str, Any]] = []
    for prop, kind in PROPERTIES[tool].items():
        for label, _ in values[kind]:
            args = base()
            probe = args.get("arguments")
            probe = probe if isinstance(probe, dict) else c.agent.probe()
            value = dict(_wrong_values(values, kind, probe))[label]
            args[prop] = value
            reply = send(args)
            c.wire.decisive()
            if isinstance(args.get("arguments"), dict):
                meant.append(args["arguments"])
            elif prop == "arguments":
                meant.append(probe)  # a coercing server queues what the string encodes
            if not _refused(reply):
                accepted.append(f"{prop} as {label} ({short(value)}): {reply.describe()}")
    return accepted, meant


def _judge(c: Conformance, tool: str, accepted: list[str]) -> None:
    __tracebackhide__ = True
    c.expect(
        not accepted,
        f"{tool} should refuse every wrong JSON type (an isError result or JSON-RPC "
        f"-32602), yet served: " + "; ".join(accepted),
    )
    c.expect.note(f"{tool}: {sum(len(WRONG[k]) for k in PROPERTIES[tool].values())} refused")


def _queued(c: Conformance, meant: list[dict[str, Any]]) -> list[Any]:
    """The commands a sync delivers with any of the ``meant`` arguments (each tracked,
    so clean-up ends it)."""
    commands = c.desktop.sync()
    queued = [found for args in meant for found in c.desktop.commands_with(commands, args)]
    for command in queued:
        if isinstance(command.get("command_id"), str):
            c.runs.track(c.roles.agent, command["command_id"])
    return queued


@check(
    "R3-types-run",
    "run_graph_session with any property of a wrong JSON type (a number for a string; a "
    "JSON string, a number or an array for arguments) is refused and queues nothing.",
    schedule="long-chain",
)
def check_types_run(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    accepted, meant = _send_each(c, "run_graph_session", c.agent.run_args, c.agent.run)
    queued = _queued(c, meant)
    c.expect(
        not queued,
        f"run_graph_session with wrong JSON types queued runs: the sync delivers {short(queued)}",
    )
    _judge(c, "run_graph_session", accepted)


@check(
    "R3-types-list",
    "list_graph_sessions with project_id a number, or limit a numeric string or a "
    "boolean, is refused.",
)
def check_types_list(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = "list_graph_sessions"  # the project is the agent's: no sessions need sharing

    def base() -> dict[str, Any]:
        return {"project_id": c.roles.project_id, "limit": 1}

    accepted, _ = _send_each(c, tool, base, lambda args: c.agent.call(tool, args))
    _judge(c, tool, accepted)


@check(
    "R3-types-get",
    "get_graph_run with command_id a number is refused.",
)
def check_types_get(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = "get_graph_run"
    # Every value sent replaces command_id: which run the valid one would name is moot.
    accepted, _ = _send_each(
        c, tool, lambda: {"command_id": str(uuid.uuid4())}, lambda args: c.agent.call(tool, args)
    )
    _judge(c, tool, accepted)


@check(
    "R3-types-cancel",
    "cancel_graph_run with command_id a number is refused and cancels nothing.",
)
def check_types_cancel(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = "cancel_graph_run"
    command_id = c.agent.queue()["command_id"]
    accepted, _ = _send_each(
        c, tool, lambda: {"command_id": command_id}, lambda args: c.agent.call(tool, args)
    )
    view = c.agent.view(command_id)
    c.expect(
        view.get("status") == QUEUED and view.get("cancel_requested") is False,
        f"cancel_graph_run with wrong JSON types changed run {command_id}: {short(view)}",
    )
    _judge(c, tool, accepted)


@check(
    "R3-types-null",
    "Every property of the four tools sent as null (arguments, limit, every string) is "
    "refused, and queues or cancels nothing: null is no value of any of their types.",
    schedule="long-chain",
)
def check_types_null(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    command_id = c.agent.queue()["command_id"]

    def call(tool: str) -> Callable[[dict[str, Any]], ToolReply]:
        return lambda args: c.agent.call(tool, args)

    tools: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], ToolReply]]]
    tools = {
        "run_graph_session": (c.agent.run_args, c.agent.run),
        "list_graph_sessions": (
            lambda: {"project_id": c.roles.project_id, "limit": 1},
            call("list_graph_sessions"),
        ),
        "get_graph_run": (lambda: {"command_id": command_id}, call("get_graph_run")),
        "cancel_graph_run": (lambda: {"command_id": command_id}, call("cancel_graph_run")),
    }
    accepted: list[str] = []
    meant: list[dict[str, Any]] = []
    for tool, (base, send) in tools.items():
        served, queued_with = _send_each(c, tool, base, send, NULL)
        accepted += [f"{tool} with {one}" for one in served]
        meant += queued_with
    queued = _queued(c, meant)
    c.expect(
        not queued, f"calls with null properties queued runs: the sync delivers {short(queued)}"
    )
    view = c.agent.view(command_id)
    c.expect(
        view.get("status") == QUEUED and view.get("cancel_requested") is False,
        f"cancel_graph_run with command_id null changed run {command_id}: {short(view)}",
    )
    c.expect(
        not accepted,
        "every property sent as null should be refused (an isError result or JSON-RPC "
        "-32602), yet served: " + "; ".join(accepted),
    )
    c.expect.note(f"{sum(len(p) for p in PROPERTIES.values())} null properties refused")
