"""An osFoundry-style server on the official MCP Python SDK (``mcp`` 2.3.0), under uvicorn.

The SDK's low-level ``Server`` and its Streamable HTTP app speak MCP (both eras,
sessions, the modern envelope, Origin and Host checks). The domain and the relay
API are the kit's reference server standing in for yours (``ReferenceServer``:
its state, tokens and relay routes), so this file shows only the MCP side.

It departs from the SDK's defaults only where the rule book needs it; each
departure says the rule it serves (``docs/sdk-servers.md`` explains them):

* auth per tool, not on the whole endpoint: D3 opens ``initialize``, ``ping`` and
  ``tools/list``; R2 wants 401/403 challenges naming ``scope``. The caller is still
  identified on every request, as the SDK's authentication middleware does, so the
  SDK binds each session to the agent that opened it (R1: a session is no credential);
* strict input validation: R3 refuses ``"1"`` for an integer, a JSON string for an
  object (the SDK's argument models coerce);
* domain errors as the message alone (R3), unknown tools as JSON-RPC ``-32602`` (R1);
* each tool's ``securitySchemes`` kept in the listing (D3).

Run it: ``python examples/sdk_python_server.py [--port N]``; it prints one JSON line (the URL,
the project ids and the tokens, under the keys ``osfoundry-fake serve`` prints),
which ``pytest --osf-target=URL --osf-credentials=FILE`` reads from a file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import mcp_types as types
import uvicorn
from jsonschema import Draft202012Validator
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pytest_osfoundry.http import Request
from pytest_osfoundry.server import DomainError, ReferenceServer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

READ, RUN = "osfoundry:read", "osfoundry:run"
SCOPE = {
    "run_graph_session": RUN,
    "cancel_graph_run": RUN,
    "list_graph_sessions": READ,
    "get_graph_run": READ,
}


#: The SDK defaults this server departs from, by name; ``build(restore=...)`` (or
#: ``--sdk-default NAME``) switches one back on, to see which checks catch it.
SDK_DEFAULTS = (
    "whole-endpoint-auth",
    "challenge-without-scope",
    "lax-types",
    "prefixed-errors",
    "unknown-tool-as-error",
    "no-security-schemes",
)


def build(
    host: str, port: int, restore: frozenset[str] = frozenset()
) -> tuple[ASGIApp, dict[str, Any]]:
    """The ASGI app serving ``http://host:port/mcp`` and what it provisioned; ``restore``
    names SDK defaults (:data:`SDK_DEFAULTS`) to keep instead of departing from them."""
    unknown = restore - set(SDK_DEFAULTS)
    if unknown:
        raise ValueError(
            f"unknown SDK defaults {sorted(unknown)}; known: {', '.join(SDK_DEFAULTS)}"
        )
    url = f"http://{host}:{port}/mcp"
    domain = ReferenceServer(public_url=url)  # stands in for your domain + relay API
    made = domain.provision()
    tools = _tool_listing(domain)
    schemas = {t["name"]: Draft202012Validator(t["inputSchema"]) for t in tools}
    tools_by_name = {t["name"]: t for t in tools}

    def agent_of(authorization: str | None) -> Any:
        token = (authorization or "").removeprefix("Bearer ").strip()
        cred = domain.tokens.lookup(token or None, domain.state.clock.now())
        return domain.state.agents.get(cred.principal_id) if cred and cred.kind == "agent" else None

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in schemas:  # R1: an unknown tool is -32602, not an isError result
            if "unknown-tool-as-error" in restore:
                return _text(f"Unknown tool: {params.name}", error=True)
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        args = params.arguments or {}
        if "lax-types" in restore:  # the SDK's argument models coerce before validating
            args = _coerce(args, tools_by_name[params.name]["inputSchema"])
        problem = next(iter(schemas[params.name].iter_errors(args)), None)
        if problem is not None:  # R3: strict JSON Schema types, refused as isError
            return _text(f"Invalid arguments: {problem.message}", error=True)
        agent = agent_of(ctx.request.headers.get("authorization") if ctx.request else None)
        try:
            value = _call(domain, agent, params.name, args)
        except DomainError as err:  # R3: the message alone, no "Error executing tool" prefix
            if "prefixed-errors" in restore:
                return _text(f"Error executing tool {params.name}: {err}", error=True)
            return _text(str(err), error=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))],
            structured_content=value,
        )

    server = Server(
        "osfoundry-sdk-example", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    schemes = {t["name"]: t["securitySchemes"] for t in tools}

    async def with_security_schemes(ctx: Any, call_next: Any) -> Any:
        """D3: each tool lists its securitySchemes, which the SDK's result sieve drops."""
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools", []):
                tool["securitySchemes"] = schemes.get(tool.get("name"))
        return result

    if "no-security-schemes" not in restore:
        server.middleware.append(with_security_schemes)
    relay = Route(
        "/{path:path}", _relay_route(domain), methods=["GET", "POST", "HEAD", "PUT", "DELETE"]
    )
    app = server.streamable_http_app(streamable_http_path="/mcp", custom_starlette_routes=[relay])
    return _ToolAuth(app, domain, agent_of, restore), {
        "mcp_url": url,  # the keys `osfoundry-fake serve` prints: --osf-credentials reads them
        "relay_url": f"http://{host}:{port}",
        **made.tokens(),
        "project_id": made.project_id,
        "stranger_project_id": made.stranger_project_id,
    }


def _tool_listing(domain: ReferenceServer) -> list[dict[str, Any]]:
    """D3's four tool definitions (asked of the reference server to keep this file short;
    a real server writes them out: closed schemas, securitySchemes per tool)."""
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
    }
    reply = domain(Request("POST", domain.mcp_path, headers, body))
    tools: list[dict[str, Any]] = json.loads(reply.body)["result"]["tools"]
    return tools


def _call(domain: ReferenceServer, agent: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    st = domain.state
    if name == "run_graph_session":
        return st.run_graph_session(
            agent, args["graph_session_id"], args["idempotency_key"], args.get("arguments")
        )
    if name == "list_graph_sessions":
        return st.list_graph_sessions(agent, args["project_id"], args.get("limit"))
    if name == "get_graph_run":
        return st.get_graph_run(agent, args["command_id"])
    return st.cancel_graph_run(agent, args["command_id"])


def _text(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _relay_route(domain: ReferenceServer) -> Callable[[HttpRequest], Awaitable[Response]]:
    """The relay API and the protected-resource metadata: plain HTTP, not MCP."""

    async def route(request: HttpRequest) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        answer = domain(
            Request(
                request.method, request.url.path, headers, await request.body(), request.url.query
            )
        )
        return Response(answer.body, answer.status, dict(answer.headers))

    return route


class _ToolAuth:
    """R2 per tool: ``tools/call`` needs an agent token with the tool's scope (401/403
    with a challenge naming ``resource_metadata`` and ``scope``); D3's open methods and
    the rest of MCP pass to the SDK as they are (a token in the query string is never
    read, so a call carrying one only there is refused like one without).

    Every request with an agent token reaches the SDK as that agent's
    ``AuthenticatedUser`` (what the SDK's ``AuthenticationMiddleware`` sets): the SDK's
    session manager binds a session to the credential that opened it and answers any
    other's request with it, a ``DELETE`` without a token included, with ``404``."""

    def __init__(
        self,
        app: ASGIApp,
        domain: ReferenceServer,
        agent_of: Callable[[str | None], Any],
        restore: frozenset[str],
    ) -> None:
        self.app, self.domain, self.agent_of, self.restore = app, domain, agent_of, restore

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != "/mcp":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        refusal = self._refusal(scope, body) if scope["method"] == "POST" else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        scope = self._identified(scope)
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _identified(self, scope: Scope) -> Scope:
        """``scope`` with the agent its token names as the SDK's authenticated user."""
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        authorization = headers.get("authorization")
        agent = self.agent_of(authorization)
        if agent is None:
            return scope
        token = (authorization or "").removeprefix("Bearer ").strip()
        access = AccessToken(token=token, client_id=agent.agent_id, scopes=sorted(agent.scopes))
        return {**scope, "user": AuthenticatedUser(access)}

    def _refusal(self, scope: Scope, body: bytes) -> Response | None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        authorization = headers.get("authorization")
        agent = self.agent_of(authorization)
        if "whole-endpoint-auth" in self.restore:  # the SDK's RequireAuthMiddleware
            return None if agent is not None else self._challenge(401, READ, authorization)
        try:
            message = json.loads(body)
        except ValueError:
            return None  # the SDK answers -32700
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or message.get("method") != "tools/call":
            return None  # D3: initialize, ping, tools/list (and the rest of MCP) need no token
        needed = SCOPE.get(str(params.get("name")))
        if needed is None:
            return None  # an unknown tool: -32602 from call_tool
        if agent is None:
            return self._challenge(401, needed, authorization)
        if needed not in agent.scopes:
            return self._challenge(403, needed, authorization)
        return None

    def _challenge(self, status: int, needed: str, authorization: str | None) -> Response:
        """R2: 401/403 with ``resource_metadata`` and the ``scope`` the call needs (the
        SDK's bearer middleware names no scope)."""
        metadata = self.domain.origin() + "/.well-known/oauth-protected-resource/mcp"
        bad_token = "invalid_token" if authorization else ""
        error = "insufficient_scope" if status == 403 else bad_token
        if "challenge-without-scope" in self.restore:
            params = [
                f'error="{error or "invalid_token"}"',
                'error_description="Authentication required"',
            ]
        else:
            params = [f'error="{error}"'] if error else []
            params.append(f'scope="{needed}"')
        value = "Bearer " + ", ".join([*params, f'resource_metadata="{metadata}"'])
        return JSONResponse({"error": error or "unauthorized"}, status, {"www-authenticate": value})


def _coerce(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """What the SDK's argument models accept: ``"1"`` and ``true`` as integers, a JSON
    string of an object as that object (``--sdk-default lax-types`` only)."""
    out = dict(args)
    for name, prop in schema.get("properties", {}).items():
        value = out.get(name)
        if prop.get("type") == "integer" and isinstance(value, (bool, str)):
            with contextlib.suppress(ValueError):
                out[name] = int(value)
        elif prop.get("type") == "object" and isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                out[name] = parsed
    return out


def main(argv: list[str] | None = None) -> int:
    """Serve on 127.0.0.1 and print one JSON line with the URL and credentials."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--sdk-default",
        action="append",
        default=[],
        choices=SDK_DEFAULTS,
        help="keep this SDK default instead of departing from it (repeatable)",
    )
    args = parser.parse_args(argv)
    app, made = build("127.0.0.1", args.port, frozenset(args.sdk_default))
    sys.stdout.write(json.dumps(made) + "\n")
    sys.stdout.flush()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
