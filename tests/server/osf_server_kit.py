"""Kit for the reference-server tests: one provisioned server on a virtual clock.

:class:`Srv` drives a :class:`ReferenceServer` through its HTTP app only (it builds
:class:`~pytest_osfoundry.http.Request` objects), with small helpers for JSON-RPC tool
calls and relay calls, and :meth:`Srv.snapshot` to prove a refusal changed nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Mapping
from typing import Any

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import Provisioned, ReferenceServer

HOST = "osf.test"
ORIGIN = f"http://{HOST}"
MCP = "/mcp"
RELAY = "/external-assistants/graph-relays"
RESOURCE_METADATA = f"{ORIGIN}/.well-known/oauth-protected-resource"

GS1 = "gs_" + "1" * 32
GS2 = "gs_" + "2" * 32
RUN_NOT_FOUND = "Graph run not found or access removed"
SESSION_NOT_FOUND = "Graph session not found or access removed"
PROJECT_NOT_FOUND = "Project not found or access removed"
KEY_CONFLICT = "idempotency_key was already used with different arguments"
INVENTED = "0b5f7a3e-9c1d-4e2f-8a6b-7c8d9e0f1a2b"


def session(gsid: str, slug: str | None = None, **extra: Any) -> dict[str, Any]:
    """A shared session as the relay uploads it (the six D10 fields)."""
    rec = {
        "graph_session_id": gsid,
        "name": f"Graph {gsid[-4:]}",
        "description": "a test Graph",
        "slug": slug if slug is not None else f"graph-{gsid[-4:]}",
        "version": 1,
        "status": "active",
    }
    rec.update(extra)
    return rec


class Srv:
    """One provisioned reference server, driven through its HTTP app."""

    def __init__(self, *, provision: Mapping[str, Any] | None = None, **server_kwargs: Any) -> None:
        self.clock = VirtualClock()
        server_kwargs.setdefault("public_url", ORIGIN + server_kwargs.get("mcp_path", MCP))
        self.server = ReferenceServer(self.clock, **server_kwargs)
        self.info: Provisioned = self.server.provision(**(provision or {}))
        self.pid = self.info.project_id
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ tokens
    @property
    def agent(self) -> str:
        return self.info.agent_token

    @property
    def other(self) -> str:
        return self.info.other_agent_token

    @property
    def reader(self) -> str:
        return self.info.read_token

    @property
    def desktop(self) -> str:
        return self.info.desktop_token

    @property
    def stranger(self) -> str:
        return self.info.stranger_token

    # ------------------------------------------------------------------ raw HTTP
    def http(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        query: str = "",
    ) -> Response:
        hdrs = {"host": HOST}
        hdrs.update({k.lower(): v for k, v in (headers or {}).items()})
        return self.server(Request(method, path, hdrs, body, query))

    # ------------------------------------------------------------------ MCP
    def rpc_raw(
        self,
        message: Any,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        query: str = "",
    ) -> Response:
        hdrs = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if token is not None:
            hdrs["authorization"] = f"Bearer {token}"
        hdrs.update(headers or {})
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        return self.http("POST", MCP, body, hdrs, query)

    def rpc(
        self,
        method: str,
        params: Any = None,
        token: str | None = None,
        msg_id: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id or next(self._ids)}
        message["method"] = method
        if params is not None:
            message["params"] = params
        return self.rpc_raw(message, token, headers)

    def call(self, tool: str, args: Any, token: str | None = None, msg_id: Any = 7) -> Response:
        """A tools/call (fixed JSON-RPC id so two answers can be compared byte for byte)."""
        return self.rpc("tools/call", {"name": tool, "arguments": args}, token, msg_id)

    def result(self, tool: str, args: Any, token: str | None = None) -> dict[str, Any]:
        reply = self.call(tool, args, token if token is not None else self.agent)
        assert reply.status == 200, (reply.status, reply.body)
        assert reply.headers["content-type"] == "application/json"
        payload = reply.json()
        assert "error" not in payload, payload
        result: dict[str, Any] = payload["result"]
        return result

    def ok(self, tool: str, args: Any, token: str | None = None) -> dict[str, Any]:
        """The structuredContent of a successful call (R3 shape checked)."""
        result = self.result(tool, args, token)
        assert "isError" not in result, result
        structured: dict[str, Any] = result["structuredContent"]
        assert result["content"] == [{"type": "text", "text": result["content"][0]["text"]}]
        assert json.loads(result["content"][0]["text"]) == structured
        return structured

    def err(self, tool: str, args: Any, token: str | None = None) -> str:
        """The message of a domain error (R3: isError, content[0].text the message alone)."""
        result = self.result(tool, args, token)
        assert result.get("isError") is True, result
        assert "structuredContent" not in result
        assert len(result["content"]) == 1 and result["content"][0]["type"] == "text"
        text: str = result["content"][0]["text"]
        return text

    def queue(
        self,
        gsid: str = GS1,
        key: str = "key-00000001",
        arguments: dict[str, Any] | None = None,
        token: str | None = None,
    ) -> dict[str, Any]:
        args: dict[str, Any] = {"graph_session_id": gsid, "idempotency_key": key}
        if arguments is not None:
            args["arguments"] = arguments
        return self.ok("run_graph_session", args, token)

    def get(self, command_id: str, token: str | None = None) -> dict[str, Any]:
        return self.ok("get_graph_run", {"command_id": command_id}, token)

    def cancel(self, command_id: str, token: str | None = None) -> dict[str, Any]:
        return self.ok("cancel_graph_run", {"command_id": command_id}, token)

    # ------------------------------------------------------------------ relay
    def relay(
        self, method: str, path: str, body: Any = None, token: str | None = "desktop"
    ) -> Response:
        hdrs = {"content-type": "application/json"}
        if token == "desktop":
            token = self.desktop
        if token is not None:
            hdrs["authorization"] = f"Bearer {token}"
        if body is None:
            raw = b""
        else:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.http(method, RELAY + path, raw, hdrs)

    def sync(self, sessions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        reply = self.relay(
            "POST", "/sync", {"project_id": self.pid, "sessions": sessions or [session(GS1)]}
        )
        assert reply.status == 200, (reply.status, reply.body)
        out: dict[str, Any] = reply.json()
        return out

    def start(self, command_id: str, execution_id: str = "exec-1") -> Response:
        return self.relay("POST", f"/commands/{command_id}/start", {"execution_id": execution_id})

    def control(self, command_id: str) -> Response:
        return self.relay("GET", f"/commands/{command_id}/control")

    def complete(self, command_id: str, body: Any) -> Response:
        return self.relay("POST", f"/commands/{command_id}/complete", body)

    # ------------------------------------------------------------------ state
    def snapshot(self) -> dict[str, Any]:
        """Everything a request could change, deep-copied for a before/after compare."""
        st = self.server.state
        with st._lock:
            return copy.deepcopy(
                {
                    "runs": {cid: dataclasses.asdict(run) for cid, run in st.runs.items()},
                    "sessions": {pid: p.sessions for pid, p in st.projects.items()},
                    "queued": {pid: list(q) for pid, q in st._queued.items()},
                    "keys": {k: dataclasses.asdict(v) for k, v in st._keys.items()},
                    "agents": dict(st.agents),
                    "accounts": {a: sorted(acc.desktop_tokens) for a, acc in st.accounts.items()},
                }
            )
