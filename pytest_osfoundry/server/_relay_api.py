"""The desktop relay API (SPEC D10, R9-R13): HTTP in, :class:`ServerState` calls out.

Paths (under the relay base, by default the server's origin)::

    POST /external-assistants/graph-relays/sync
    POST /external-assistants/graph-relays/commands/{command_id}/start
    GET  /external-assistants/graph-relays/commands/{command_id}/control
    POST /external-assistants/graph-relays/commands/{command_id}/complete

Errors are ``{"error": "<message>"}`` with the status the rule names: 400 for a bad
body, 401 without a known token, 403 for an agent's token (R12), 404 for an unknown
command or another owner's (R13), 409 for a conflicting completion or start, 413 for
an oversized completion. A message that quotes the request (a path, a command or
project id) is masked first (:meth:`~pytest_osfoundry.server._auth.TokenStore.mask`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from pytest_osfoundry._vocabulary import RELAY_ACTIONS, RELAY_COMMANDS, RELAY_PREFIX, RELAY_SYNC
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server._auth import TokenStore, bearer_token
from pytest_osfoundry.server._request_body import BadJson, parse_body
from pytest_osfoundry.server._state import Account, DomainError, ServerState

__all__ = ["RelayApi"]

_UNDER = RELAY_PREFIX + "/"
_NEED_DESKTOP = "a valid desktop bearer token is required"


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response(status, {"error": message}, headers)


class RelayApi:
    """Serves the relay paths for one :class:`ServerState`."""

    def __init__(self, state: ServerState, tokens: TokenStore) -> None:
        self.state = state
        self.tokens = tokens

    @staticmethod
    def owns(path: str) -> bool:
        """True when ``path`` belongs to the relay API."""
        return path == RELAY_PREFIX or path.startswith(_UNDER)

    def handle(self, request: Request) -> Response:
        """Serve one relay request (path already known to be under the relay prefix)."""
        route = self._route(request.path)
        if route is None:
            return _error(
                404, self.tokens.mask(f"no relay endpoint at {request.path}", request.headers)
            )
        action, command_id = route
        expected = "POST" if action == "sync" else RELAY_ACTIONS[action]
        if request.method != expected:
            return _error(405, f"use {expected} for {action}", {"allow": expected})
        account_or_refusal = self._authenticate(request)
        if isinstance(account_or_refusal, Response):
            return account_or_refusal
        account = account_or_refusal
        body: Any = None
        if expected == "POST":
            try:
                body = parse_body(request.body)
            except BadJson as bad:
                return _error(400, f"the body must be JSON: {bad}")
            if not isinstance(body, dict):
                return _error(400, "the body must be a JSON object")
        try:
            if action == "sync":
                assert body is not None
                sessions = body.get("sessions")  # required: a missing list is no list
                result = self.state.relay_sync(account, body.get("project_id"), sessions)
            elif action == "start":
                assert body is not None and command_id is not None
                result = self.state.relay_start(account, command_id, body.get("execution_id"))
            elif action == "control":
                assert command_id is not None
                result = self.state.relay_control(account, command_id)
            else:
                assert body is not None and command_id is not None
                result = self.state.relay_complete(account, command_id, body)
        except DomainError as err:  # its message may quote a command or project id
            return _error(err.http_status, self.tokens.mask(err.message, request.headers))
        return json_response(200, result)

    @staticmethod
    def _route(path: str) -> tuple[str, str | None] | None:
        if path == RELAY_SYNC:
            return "sync", None
        if not path.startswith(RELAY_COMMANDS):
            return None
        rest = path[len(RELAY_COMMANDS) :]
        command_id, _, action = rest.partition("/")
        if not command_id or action not in RELAY_ACTIONS:
            return None
        return action, unquote(command_id)

    def _authenticate(self, request: Request) -> Account | Response:
        """R12: a desktop token of an account; 401 unknown, 403 an agent's token."""
        cred = self.tokens.lookup(
            bearer_token(request.headers.get("authorization")), self.state.clock.now()
        )
        if cred is None:
            return _error(401, _NEED_DESKTOP, {"www-authenticate": "Bearer"})
        if cred.kind != "desktop":
            return _error(403, "an agent's token cannot act as the desktop relay")
        account = self.state.accounts.get(cred.principal_id)
        if account is None:
            return _error(401, _NEED_DESKTOP, {"www-authenticate": "Bearer"})
        return account
