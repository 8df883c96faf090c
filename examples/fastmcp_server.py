"""An osFoundry-style server on FastMCP (``fastmcp`` 4.1.6), under uvicorn.

FastMCP speaks MCP (both eras, sessions, the modern envelope) and builds each tool
from a typed Python function. The domain and the relay API are the kit's reference
server standing in for yours (``ReferenceServer``: its state, tokens and relay
routes), so this file shows the MCP side in FastMCP's own idioms: tools from
functions, an auth provider (a ``TokenVerifier`` behind a ``RemoteAuthProvider``),
custom routes, ASGI middleware where the rule book needs one.

It departs from FastMCP's defaults only where the rule book needs it; each departure
says the rule it serves (``docs/sdk-servers.md`` explains them):

* auth per tool, not on the whole endpoint, and not by hiding tools: D3 opens
  ``initialize``, ``ping`` and ``tools/list`` and lists the four tools to everyone;
  R2 wants ``tools/call`` refused with 401/403 challenges naming ``scope``;
* strict input validation, and ``arguments``/``limit`` that are optional but not
  nullable: R3 refuses ``"1"`` for an integer and ``null`` for an object;
* domain errors as the message alone (R3), unknown tools as JSON-RPC ``-32602`` (R1);
* each tool's ``securitySchemes`` in the listing (D3);
* the Host/Origin guard on (R1: a foreign ``Origin`` gets 403).

Run it: ``python examples/fastmcp_server.py [--port N]``; it prints one JSON line (the URL,
the project ids and the tokens, under the keys ``osfoundry-fake serve`` prints),
which ``pytest --osf-target=URL --osf-credentials=FILE`` reads from a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any

import uvicorn
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AccessToken, RemoteAuthProvider, TokenVerifier, require_scopes
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.middleware import Middleware, MiddlewareContext
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl, Field
from starlette.middleware import Middleware as AsgiMiddleware
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

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
INVALID_PARAMS = -32602
RUN_DESCRIPTION = (
    "Queue a Graph run on the owner's online desktop in a connected project. Retrieve "
    "progress and result with get_graph_run. The desktop can go offline, and local tool "
    "approvals still apply."
)
LIST_DESCRIPTION = "List the Graph sessions the owner's desktop shared with a connected project."
GET_DESCRIPTION = "Progress and result of a Graph run started by this Connected agent."
CANCEL_DESCRIPTION = "Cancel a Graph run started by this Connected agent."
Key = Annotated[str, Field(min_length=8, max_length=128)]
Limit = Annotated[int, Field(ge=1, le=50)]

#: The FastMCP defaults this server departs from, by name; ``build(restore=...)`` (or
#: ``--fastmcp-default NAME``) switches one back on, to see which checks catch it.
FASTMCP_DEFAULTS = (
    "endpoint-wide-auth",
    "challenge-without-scope",
    "per-tool-auth-hides-tools",
    "lax-types",
    "nullable-arguments",
    "unknown-tool-as-error",
    "no-security-schemes",
    "no-origin-check",
    "prefixed-errors",
)


class DomainTokens(TokenVerifier):
    """FastMCP's token verifier over the domain's tokens: an agent token is an
    ``AccessToken`` whose ``client_id`` is the agent and whose scopes are its own."""

    def __init__(self, domain: ReferenceServer) -> None:
        super().__init__()
        self.domain = domain

    async def verify_token(self, token: str) -> AccessToken | None:
        cred = self.domain.tokens.lookup(token, self.domain.state.clock.now())
        agent = self.domain.state.agents.get(cred.principal_id) if cred else None
        if cred is None or cred.kind != "agent" or agent is None:
            return None  # unknown, expired, or a desktop's token: no agent credential
        return AccessToken(token=token, client_id=agent.agent_id, scopes=sorted(agent.scopes))


def build(
    host: str, port: int, restore: frozenset[str] = frozenset()
) -> tuple[ASGIApp, dict[str, Any]]:
    """The ASGI app serving ``http://host:port/mcp`` and what it provisioned; ``restore``
    names FastMCP defaults (:data:`FASTMCP_DEFAULTS`) to keep instead of departing."""
    unknown = restore - set(FASTMCP_DEFAULTS)
    if unknown:
        raise ValueError(
            f"unknown FastMCP defaults {sorted(unknown)}; known: {', '.join(FASTMCP_DEFAULTS)}"
        )
    origin = f"http://{host}:{port}"
    domain = ReferenceServer(public_url=origin + "/mcp")  # stands in for your domain + relay API
    made = domain.provision()
    provider = RemoteAuthProvider(
        token_verifier=DomainTokens(domain),
        authorization_servers=[AnyHttpUrl(origin)],
        base_url=origin,
        scopes_supported=[READ, RUN],
    )
    hide_tools = "per-tool-auth-hides-tools" in restore
    mcp = FastMCP(
        "osfoundry-fastmcp-example",
        version="0.1.0",
        # The default puts RequireAuthMiddleware on the whole endpoint (D3: tools/list
        # must answer without a token): the provider's parts are mounted below instead.
        auth=provider if "endpoint-wide-auth" in restore else None,
        # R3: "1" is no integer, a JSON string no object (the default coerces).
        strict_input_validation="lax-types" not in restore,
    )

    def agent() -> Any:
        token = get_access_token()
        return domain.state.agents.get(token.client_id) if token is not None else None

    def call(operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return operation()
        except DomainError as err:  # R3: the message alone, no "Error calling tool" prefix
            if "prefixed-errors" in restore:
                raise  # FastMCP words it "Error calling tool 'NAME': ..."
            raise ToolError(str(err)) from None

    def tool(name: str, description: str, **annotations: bool) -> Callable[[Any], Any]:
        """``@mcp.tool`` with D3's description and hints; with the per-tool auth default,
        FastMCP's ``auth=``, which hides what a token may not call (D3 lists four)."""
        return mcp.tool(
            name=name,
            description=description,
            annotations=annotations or None,
            auth=require_scopes(SCOPE[name]) if hide_tools else None,
        )

    def queue(session: str, key: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        return call(lambda: domain.state.run_graph_session(agent(), session, key, arguments or {}))

    def sessions(project_id: str, limit: int | None) -> dict[str, Any]:
        return call(lambda: domain.state.list_graph_sessions(agent(), project_id, limit))

    run = tool("run_graph_session", RUN_DESCRIPTION, readOnlyHint=False, destructiveHint=True)
    listing = tool("list_graph_sessions", LIST_DESCRIPTION, readOnlyHint=True)
    if "nullable-arguments" in restore:  # FastMCP's natural optional parameters take null

        @run
        def run_graph_session(
            graph_session_id: str, idempotency_key: Key, arguments: dict[str, Any] | None = None
        ) -> dict[str, Any]:
            return queue(graph_session_id, idempotency_key, arguments)

        @listing
        def list_graph_sessions(project_id: str, limit: Limit | None = None) -> dict[str, Any]:
            return sessions(project_id, limit)

    else:  # R3: optional, but null is no object and no integer

        @run
        def run_graph_session(
            graph_session_id: str,
            idempotency_key: Key,
            arguments: dict[str, Any] = Field(default_factory=dict),  # noqa: B008
        ) -> dict[str, Any]:
            return queue(graph_session_id, idempotency_key, arguments)

        @listing
        def list_graph_sessions(project_id: str, limit: Limit = 50) -> dict[str, Any]:
            return sessions(project_id, limit)

    @tool("get_graph_run", GET_DESCRIPTION, readOnlyHint=True)
    def get_graph_run(command_id: str) -> dict[str, Any]:
        return call(lambda: domain.state.get_graph_run(agent(), command_id))

    @tool("cancel_graph_run", CANCEL_DESCRIPTION)
    def cancel_graph_run(command_id: str) -> dict[str, Any]:
        return call(lambda: domain.state.cancel_graph_run(agent(), command_id))

    if "unknown-tool-as-error" not in restore:
        mcp.add_middleware(UnknownToolIsInvalidParams())

    @mcp.custom_route("/external-assistants/graph-relays/{path:path}", methods=["GET", "POST"])
    async def relay_api(request: HttpRequest) -> Response:
        """The relay API: plain HTTP beside MCP (the domain's own routes)."""
        return await _forward(domain, request)

    middleware: list[AsgiMiddleware] = []
    if "endpoint-wide-auth" not in restore:
        # The provider's parts without its endpoint-wide gate: the RFC 9728 metadata
        # route and the middleware that makes the caller's AccessToken the tools' own.
        for route in provider.get_well_known_routes(mcp_path="/mcp"):
            mcp.custom_route(route.path, methods=sorted(route.methods or ["GET"]))(route.endpoint)
        middleware += provider.get_middleware()
        if not hide_tools:
            middleware.append(AsgiMiddleware(ToolScopes, provider=provider, restore=restore))
    app = mcp.http_app(
        path="/mcp",
        middleware=middleware,
        # R1: a foreign Origin gets 403 (the default, False, checks none; "auto" checks
        # only requests whose Host is loopback, not a server reached by its public name).
        host_origin_protection="no-origin-check" not in restore,
        allowed_hosts=[host],
    )
    if "no-security-schemes" not in restore:
        _list_security_schemes(mcp)
    return app, {
        "mcp_url": origin + "/mcp",  # the keys `osfoundry-fake serve` prints (--osf-credentials)
        "relay_url": origin,
        **made.tokens(),
        "project_id": made.project_id,
        "stranger_project_id": made.stranger_project_id,
    }


class UnknownToolIsInvalidParams(Middleware):
    """R1: a call of a tool that does not exist is JSON-RPC ``-32602`` (FastMCP answers
    it with an ``isError`` result)."""

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        name = context.message.name
        if (
            context.fastmcp_context is None
            or await context.fastmcp_context.fastmcp.get_tool(name) is None
        ):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        return await call_next(context)


def _list_security_schemes(mcp: FastMCP) -> None:
    """D3: each tool lists its ``securitySchemes``. FastMCP's ``Tool`` has no field for
    it and the MCP SDK's drops unknown fields when the result is serialized, so the
    serialized ``tools/list`` result gets them in a middleware of the SDK server FastMCP
    runs on (the seam the official SDK's example uses; FastMCP offers no public one)."""

    async def add(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools", []):
                scope = SCOPE.get(tool.get("name"))
                if scope is not None:
                    tool["securitySchemes"] = [{"type": "oauth2", "scopes": [scope]}]
        return result

    mcp._mcp_server.middleware.insert(0, add)


async def _forward(domain: ReferenceServer, request: HttpRequest) -> Response:
    headers = {k.lower(): v for k, v in request.headers.items()}
    answer = domain(
        Request(request.method, request.url.path, headers, await request.body(), request.url.query)
    )
    return Response(answer.body, answer.status, dict(answer.headers))


class ToolScopes:
    """R2 per tool: ``tools/call`` needs an agent token with the tool's scope (401/403
    with a challenge naming ``resource_metadata`` and ``scope``); D3's open methods and
    the rest of MCP pass to FastMCP as they are (a token in the query string is never
    read, so a call carrying one only there is refused like one without)."""

    def __init__(self, app: ASGIApp, provider: RemoteAuthProvider, restore: frozenset[str]) -> None:
        self.app, self.provider, self.restore = app, provider, restore

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
        refusal = await self._refusal(scope, body) if scope["method"] == "POST" else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refusal(self, scope: Scope, body: bytes) -> Response | None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            message = json.loads(body)
        except ValueError:
            return None  # FastMCP answers -32700
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or message.get("method") != "tools/call":
            return None  # D3: initialize, ping, tools/list (and the rest of MCP) need no token
        needed = SCOPE.get(str(params.get("name")))
        if needed is None:
            return None  # an unknown tool: -32602
        authorization = headers.get("authorization")
        scheme, _, token = (authorization or "").partition(" ")
        access = (
            await self.provider.verify_token(token.strip()) if scheme.lower() == "bearer" else None
        )
        if access is None:
            return self._challenge(401, needed, authorization)
        if needed not in access.scopes:
            return self._challenge(403, needed, authorization)
        return None

    def _challenge(self, status: int, needed: str, authorization: str | None) -> Response:
        """R2: 401/403 with ``resource_metadata`` and the ``scope`` the call needs
        (FastMCP's own challenge names the endpoint's required scopes: none here)."""
        origin = str(self.provider.base_url).rstrip("/")
        metadata = f"{origin}/.well-known/oauth-protected-resource/mcp"
        error = (
            "insufficient_scope" if status == 403 else ("invalid_token" if authorization else "")
        )
        params = [f'error="{error}"'] if error else []
        if "challenge-without-scope" not in self.restore:
            params.append(f'scope="{needed}"')
        value = "Bearer " + ", ".join([*params, f'resource_metadata="{metadata}"'])
        return JSONResponse({"error": error or "unauthorized"}, status, {"www-authenticate": value})


def main(argv: list[str] | None = None) -> int:
    """Serve on 127.0.0.1 and print one JSON line with the URL and credentials."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument(
        "--fastmcp-default",
        action="append",
        default=[],
        choices=FASTMCP_DEFAULTS,
        help="keep this FastMCP default instead of departing from it (repeatable)",
    )
    args = parser.parse_args(argv)
    app, made = build("127.0.0.1", args.port, frozenset(args.fastmcp_default))
    sys.stdout.write(json.dumps(made) + "\n")
    sys.stdout.flush()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
