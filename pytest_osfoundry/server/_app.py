"""The reference server: one HTTP app in front of one :class:`ServerState`.

:class:`ReferenceServer` is the single handler every door calls — the loopback HTTP
server, the respx mount and the direct in-process transport — so their behaviour
cannot drift. It routes:

* ``/mcp`` (configurable) → :class:`~pytest_osfoundry.server._mcp.McpEndpoint`
* ``/external-assistants/graph-relays/...`` → :class:`~pytest_osfoundry.server._relay_api.RelayApi`
* ``/.well-known/oauth-protected-resource`` → the protected-resource metadata (R2)

and applies the checks that hold for every path: a present ``Origin`` that is not
allowed gets 403 before anything else happens (R1, DNS rebinding), bodies over 1 MiB
get 413, a token in the query string gets 400 (R2: never accepted), unknown paths 404. Nothing it
answers is ever a 500 with a traceback: an unexpected error is logged (without
request headers) and answered with a plain 500 JSON body. Whatever it echoes of a
request (an ``Origin``, a path, that log line and its traceback) is masked first by
:meth:`~pytest_osfoundry.server._auth.TokenStore.mask`: no token the server issued
and no credential the request carried is ever shown.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._origin import origin_of
from pytest_osfoundry.clock import Clock
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server._auth import TokenStore, has_query_token
from pytest_osfoundry.server._mcp import McpEndpoint
from pytest_osfoundry.server._origins import OriginPolicy
from pytest_osfoundry.server._relay_api import RelayApi
from pytest_osfoundry.server._state import Retention, ServerState
from pytest_osfoundry.server._tools import READ_SCOPE, RUN_SCOPE

__all__ = ["MAX_BODY", "Provisioned", "ReferenceServer"]

MAX_BODY = 1024 * 1024
WELL_KNOWN = "/.well-known/oauth-protected-resource"
log = logging.getLogger("pytest_osfoundry.server")


@dataclass(frozen=True)
class Provisioned:
    """What :meth:`ReferenceServer.provision` made: one owner, project, desktop, agents.

    ``agent_token`` and ``other_agent_token`` are two connected agents of the project
    with ``osfoundry:read osfoundry:run``; ``read_token`` an agent with
    ``osfoundry:read`` only; ``desktop_token`` the owner's relay credential;
    ``stranger_token`` an agent of *another* account (with its own project).
    """

    account_id: str
    project_id: str
    agent_token: str = field(repr=False)
    other_agent_token: str = field(repr=False)
    read_token: str = field(repr=False)
    desktop_token: str = field(repr=False)
    stranger_token: str = field(repr=False)
    stranger_project_id: str = ""
    stranger_desktop_token: str = field(default="", repr=False)

    def tokens(self) -> dict[str, str]:
        """The credentials by role (for printing, mask them first)."""
        return {
            "agent_token": self.agent_token,
            "other_agent_token": self.other_agent_token,
            "read_token": self.read_token,
            "desktop_token": self.desktop_token,
            "stranger_token": self.stranger_token,
            "stranger_desktop_token": self.stranger_desktop_token,
        }


class ReferenceServer:
    """The kit's reference implementation of conformance/spec.md, as an HTTP handler.

    Call it with a :class:`~pytest_osfoundry.http.Request`; read and provision its
    :attr:`state` directly.

    * ``public_url`` is the MCP URL named in challenges and the protected-resource
      metadata. Without it, the first door that serves the app names it (the
      loopback server its bound address, a respx mount its base URL, through
      :meth:`serve_at`); until then it is ``http://localhost`` + ``mcp_path``. The
      request's ``Host`` header is never used.
    * ``protocols`` restricts the MCP revisions served (default: all three,
      ``2026-07-28``, ``2025-11-25``, ``2025-06-18``).
    * ``allow_origins`` adds origins a browser may call from; loopback origins and
      the server's own origin are always allowed, a request without ``Origin`` is
      always served.
    * ``retention`` bounds the finished work the state keeps
      (:class:`~pytest_osfoundry.server._records.Retention`; its defaults unless given).
    """

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        state: ServerState | None = None,
        mcp_path: str = "/mcp",
        public_url: str | None = None,
        sse: bool = False,
        seed: int | None = None,
        protocols: Iterable[str] | None = None,
        allow_origins: Iterable[str] = (),
        retention: Retention | None = None,
    ) -> None:
        if not mcp_path.startswith("/"):
            raise ValueError(f"mcp_path must start with '/', got {mcp_path!r}")
        if public_url is not None:
            origin_of(public_url)  # refuses anything but an absolute http(s) URL
        if state is not None and retention is not None:
            raise ValueError("give retention to the ServerState you pass, not beside it")
        self.state = (
            state if state is not None else ServerState(clock, seed=seed, retention=retention)
        )
        self.tokens = TokenStore()
        self._mcp_paths = (mcp_path, mcp_path + "/")
        self.public_url = public_url
        self.origins = OriginPolicy(allow_origins)
        self.mcp = McpEndpoint(self.state, self.tokens, sse=sse, protocols=protocols)
        self.relay = RelayApi(self.state, self.tokens)
        self.provisioned: Provisioned | None = None

    def sibling(self, *, protocols: Iterable[str]) -> ReferenceServer:
        """Another app over this one's state and tokens that serves only ``protocols``:
        the same world (accounts, runs, credentials) through an endpoint of other MCP
        revisions, with its own legacy sessions. It names the same public URL.

        Raises:
            ValueError: ``protocols`` is empty or names a revision the kit does not know.
        """
        other = ReferenceServer(
            state=self.state,
            mcp_path=self.mcp_path,
            public_url=self.public_url,
            sse=self.mcp.sse,
            protocols=protocols,
        )
        other.tokens = self.tokens
        other.origins = self.origins
        other.mcp = McpEndpoint(self.state, self.tokens, sse=self.mcp.sse, protocols=protocols)
        other.relay = RelayApi(self.state, self.tokens)
        return other

    @property
    def mcp_path(self) -> str:
        """The path of the MCP endpoint (fixed when the server is made)."""
        return self._mcp_paths[0]

    @property
    def protocols(self) -> tuple[str, ...]:
        """The MCP revisions served, newest first."""
        return self.mcp.protocols

    def serve_at(self, origin: str) -> None:
        """A door tells the app where it is served; names the public URL if unset."""
        if self.public_url is None:
            self.public_url = origin_of(origin) + self.mcp_path

    # ------------------------------------------------------------------ provisioning
    def provision(
        self,
        *,
        project_id: str | None = None,
        agent_token: str | None = None,
        other_agent_token: str | None = None,
        read_token: str | None = None,
        desktop_token: str | None = None,
    ) -> Provisioned:
        """Create an owner with one project and desktop, three agents, and a stranger.

        Tokens are random unless given. Returns them in a :class:`Provisioned`.
        """
        st = self.state
        both = (READ_SCOPE, RUN_SCOPE)
        account = st.add_account()
        project = st.add_project(account.account_id, project_id)
        pid = project.project_id
        a1 = st.add_agent(account.account_id, [pid], both)
        a2 = st.add_agent(account.account_id, [pid], both)
        a3 = st.add_agent(account.account_id, [pid], (READ_SCOPE,))
        desktop = self.tokens.issue("desktop", account.account_id, desktop_token)
        account.desktop_tokens.add(desktop)
        other = st.add_account()
        other_project = st.add_project(other.account_id)
        stranger = st.add_agent(other.account_id, [other_project.project_id], both)
        other_desktop = self.tokens.issue("desktop", other.account_id)
        other.desktop_tokens.add(other_desktop)
        self.provisioned = Provisioned(
            account_id=account.account_id,
            project_id=pid,
            agent_token=self.tokens.issue("agent", a1.agent_id, agent_token),
            other_agent_token=self.tokens.issue("agent", a2.agent_id, other_agent_token),
            read_token=self.tokens.issue("agent", a3.agent_id, read_token),
            desktop_token=desktop,
            stranger_token=self.tokens.issue("agent", stranger.agent_id),
            stranger_project_id=other_project.project_id,
            stranger_desktop_token=other_desktop,
        )
        return self.provisioned

    # ------------------------------------------------------------------ HTTP
    def __call__(self, request: Request) -> Response:
        """Answer one HTTP request. Never raises."""
        try:
            return self._dispatch(request)
        except Exception:  # a bug in the kit: answer plainly, log without secrets
            mask = self.tokens.mask
            log.error(
                "internal error serving %s %s\n%s",
                request.method,
                mask(request.path, request.headers),
                mask(traceback.format_exc().rstrip(), request.headers),
            )
            return json_response(500, {"error": "internal error in the reference server"})

    def origin(self, request: Request | None = None) -> str:
        """This server's public origin (from ``public_url``; never from the request)."""
        return origin_of(self.public_url) if self.public_url else "http://localhost"

    def mcp_url(self, request: Request | None = None) -> str:
        """The MCP endpoint's public absolute URL."""
        return self.public_url or self.origin() + self.mcp_path

    def _dispatch(self, request: Request) -> Response:
        sent_origin = request.headers.get("origin")
        if sent_origin is not None and not self.origins.allows(sent_origin, self.origin()):
            refused = f"Origin {sent_origin[:200]!r} is not allowed to call this server"
            return json_response(403, {"error": self.tokens.mask(refused, request.headers)})
        if len(request.body) > MAX_BODY:
            return json_response(413, {"error": f"request body over {MAX_BODY} bytes"})
        if request.query and has_query_token(request.query):
            return json_response(
                400,
                {
                    "error": "tokens in the query string are never accepted; "
                    "send Authorization: Bearer <token>"
                },
            )
        path = request.path
        if path in self._mcp_paths:
            return self.mcp.handle(request, self.origin)
        if RelayApi.owns(path):
            return self.relay.handle(request)
        if path == WELL_KNOWN or path == WELL_KNOWN + self.mcp_path:
            if request.method not in ("GET", "HEAD"):
                return json_response(405, {"error": "use GET"}, {"allow": "GET"})
            return json_response(200, self._resource_metadata(request))
        return json_response(
            404, {"error": self.tokens.mask(f"nothing at {path}", request.headers)}
        )

    def _resource_metadata(self, request: Request) -> dict[str, Any]:
        origin = self.origin()
        return {
            "resource": self.mcp_url(),
            "authorization_servers": [origin],
            "scopes_supported": [READ_SCOPE, RUN_SCOPE],
            "bearer_methods_supported": ["header"],
        }
