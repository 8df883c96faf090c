"""Deliberately broken reference servers: proof that the conformance suite has teeth.

Each function here is a server factory for ``--osf-target=embedded:MODULE:FACTORY``
(``--osf-target=embedded:tests.conformance.variants:other_agent_reads_run``
runs the suite against the first one) that returns the kit's reference server with
*one* rule broken. Every variant is a :class:`~tests.conformance.osf_variant_kit.Wrapped`
handler in front of a plain :class:`~pytest_osfoundry.server.ReferenceServer`: it
rewrites requests or answers, answers by itself, or sends the server requests of its
own, as a proxy could, and never touches the server's insides.

:data:`VARIANTS` lists them with what each breaks and exactly which checks must fail
against it; the kit's own tests run the whole suite against every variant and assert
that those checks fail and no other does. :data:`TIMING_VARIANTS` holds the ones only
the opt-in timing check catches. Other modules of this folder keep variants of their
own in registries of the same shape.

They double as examples: a server that behaves like one of these is wrong in the way
its entry says.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import Provisioned, ReferenceServer
from tests.conformance.osf_variant_kit import (
    RUN_NOT_FOUND,
    Server,
    Wrapped,
    is_uuid,
    json_body,
    relay_answer,
    relay_error,
    relay_route,
    rpc_message,
    session_records,
    structured,
    token_of,
    tool_call,
    tool_error_text,
    tool_result,
    with_arguments,
    with_body,
    with_json,
    with_structured,
    with_token,
)

__all__ = ["TIMING_VARIANTS", "VARIANTS", "EmbeddedServer", "Variant", "reference"]


class EmbeddedServer(Protocol):
    """What ``--osf-target=embedded:MODULE:FACTORY`` needs of a server."""

    mcp_path: str

    def __call__(self, request: Request, /) -> Response: ...

    def provision(self) -> Provisioned: ...


_F = TypeVar("_F", bound=Callable[[], EmbeddedServer])


@dataclass(frozen=True)
class Variant:
    """A broken server: its factory, what it breaks, and the checks that must fail."""

    name: str
    breaks: str
    fails: frozenset[str]
    factory: Callable[[], EmbeddedServer]

    @property
    def target(self) -> str:
        """The ``--osf-target`` value that runs the suite against this variant."""
        return f"embedded:{self.factory.__module__}:{self.name}"


#: Every variant by name (each caught by the checks that run by default).
VARIANTS: dict[str, Variant] = {}

#: Variants only the opt-in timing check catches (run with ``--osf-timing``).
TIMING_VARIANTS: dict[str, Variant] = {}


def _variant(
    breaks: str, fails: Iterable[str], registry: dict[str, Variant] = VARIANTS
) -> Callable[[_F], _F]:
    def register(factory: _F) -> _F:
        name = factory.__name__
        registry[name] = Variant(name, breaks, frozenset(fails), factory)
        return factory

    return register


def reference() -> ReferenceServer:
    """The unbroken reference server (what ``--osf-target=embedded`` runs)."""
    return ReferenceServer()


def _msg_id(request: Request) -> Any:
    return (rpc_message(request) or {}).get("id")


# ---------------------------------------------------------------------- access (D6)
class _OthersRunsOpen(Wrapped):
    """Calls of ``tools`` on another agent's run are made as the agent that queued it
    (once the caller's token passed the tool's scope check)."""

    tools: tuple[str, ...] = ()
    needs_run_scope = False

    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        token = token_of(request)
        if self.needs_run_scope and token == self.made.read_token:
            return self.forward(request)
        if call is not None and call[0] in self.tools:
            queued = self.queued(call[1].get("command_id"))
            if queued is not None and queued.token != token:
                return self.forward(with_token(request, queued.token))
        return self.forward(request)


class _OtherAgentReadsRun(_OthersRunsOpen):
    tools = ("get_graph_run",)


@_variant(
    "get_graph_run shows any caller any run (D6).",
    # R1-session-bound-to-agent: another agent carrying the agent's session reads its run.
    ["D6-get-other-agent", "D6-get-other-account", "R1-session-bound-to-agent"],
)
def other_agent_reads_run() -> Wrapped:
    """Another agent (or account) reading a real command id gets the run."""
    return _OtherAgentReadsRun()


class _OtherAgentAnsweredDifferently(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        call = tool_call(request)
        if call is None or call[0] != "get_graph_run" or tool_error_text(response) is None:
            return response
        queued = self.queued(call[1].get("command_id"))
        if queued is None or queued.token == token_of(request):
            return response
        payload = json_body(response.body)
        payload["result"]["content"][0]["text"] = "Graph run was started by another Connected agent"
        return with_json(response, payload)


@_variant(
    "Another agent's real command id gets a different error than an unknown id (D6).",
    ["D6-get-other-agent", "D6-get-other-account"],
)
def other_agent_answered_differently() -> Wrapped:
    """'Not yours' and 'does not exist' are told apart."""
    return _OtherAgentAnsweredDifferently()


class _OtherAgentCancels(_OthersRunsOpen):
    tools = ("cancel_graph_run",)
    needs_run_scope = True


@_variant(
    "cancel_graph_run cancels anyone's run (D6).",
    ["D6-cancel-other-agent", "D6-cancel-other-account"],
)
def other_agent_cancels() -> Wrapped:
    """A cancel works on someone else's run."""
    return _OtherAgentCancels()


class _MalformedIdsTold(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        call = tool_call(request)
        if (
            call is not None
            and call[0] in ("get_graph_run", "cancel_graph_run")
            and isinstance(call[1].get("command_id"), str)
            and not is_uuid(call[1]["command_id"])
            and tool_error_text(response) == RUN_NOT_FOUND
        ):
            payload = json_body(response.body)
            payload["result"]["content"][0]["text"] = "command_id must be a UUID"
            return with_json(response, payload)
        return response


@_variant(
    "A malformed command id gets its own error message (D6).",
    ["D6-get-malformed-id", "D6-cancel-malformed-id", "R7-cancel-unknown"],
)
def malformed_ids_told() -> Wrapped:
    """Malformed ids are answered differently from unknown UUIDs."""
    return _MalformedIdsTold()


class _SlowForOthers(Wrapped):
    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        if call is not None and call[0] == "get_graph_run":
            queued = self.queued(call[1].get("command_id"))
            if queued is not None and queued.token != token_of(request):
                time.sleep(0.015)  # e.g. a permission lookup only real runs go through
        return self.forward(request)


@_variant(
    "Another agent's real command id is answered 15 ms slower than an unknown one (D6).",
    ["D6-timing"],
    TIMING_VARIANTS,
)
def timing_leak() -> Wrapped:
    """Same bytes, different latency: a leaked id is confirmed by timing."""
    return _SlowForOthers()


# ---------------------------------------------------------------------- idempotency
def _valid_key(key: Any) -> bool:
    return isinstance(key, str) and 8 <= len(key) <= 128


class _IdempotencyIgnored(Wrapped):
    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        if call is not None and call[0] == "run_graph_session":
            args = call[1]
            if _valid_key(args.get("idempotency_key")):
                fresh = {**args, "idempotency_key": uuid.uuid4().hex}
                return self.forward(with_arguments(request, fresh))
        return self.forward(request)


@_variant(
    "Every run_graph_session queues a new run, whatever its key (D7, R4, R5).",
    [
        "D7-retry-same-key",
        "R4-replay-current-status",
        "R5-concurrent-same-key",
        "R5-different-arguments",
        "R5-different-session",
    ],
)
def idempotency_ignored() -> Wrapped:
    """Idempotency keys are ignored."""
    return _IdempotencyIgnored()


class _KeysShared(Wrapped):
    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.first_user: dict[str, str] = {}  # idempotency key -> token that used it first

    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        key = call[1].get("idempotency_key") if call and call[0] == "run_graph_session" else None
        if not isinstance(key, str):
            return self.forward(request)
        token = token_of(request) or ""
        first = self.first_user.get(key)
        if first is not None and first != token:
            return self.forward(with_token(request, first))  # the first agent's run replays
        response = self.forward(request)
        if structured(response) is not None:
            self.first_user.setdefault(key, token)
        return response


@_variant("Idempotency keys are shared by all agents (R5).", ["R5-key-per-agent"])
def keys_shared_across_agents() -> Wrapped:
    """Another agent's identical key replays the first agent's run."""
    return _KeysShared()


class _ShortKeyAccepted(Wrapped):
    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        key = call[1].get("idempotency_key") if call else None
        if isinstance(key, str) and len(key) == 7:
            assert call is not None
            return self.forward(with_arguments(request, {**call[1], "idempotency_key": key + "~"}))
        return self.forward(request)


@_variant("A 7-character idempotency_key is accepted (D7).", ["D7-key-too-short"])
def short_key_accepted() -> Wrapped:
    """run_graph_session takes 7-character keys (the listing still says 8)."""
    return _ShortKeyAccepted()


# ---------------------------------------------------------------------- scopes
class _ReadTokenRuns(Wrapped):
    """The read-only agent's runs are queued (and then read, cancelled) as the first agent.

    Its keys get keys of their own, so they never meet the first agent's.
    """

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.keys: dict[str, str] = {}
        self.runs: set[str] = set()

    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        if call is None or token_of(request) != self.made.read_token:
            return self.forward(request)
        name, args = call
        as_agent = with_token(request, self.made.agent_token)
        if name == "run_graph_session":
            key = args.get("idempotency_key")
            if _valid_key(key):
                assert isinstance(key, str)
                own = self.keys.setdefault(key, uuid.uuid4().hex)
                as_agent = with_arguments(as_agent, {**args, "idempotency_key": own})
            response = self.forward(as_agent)
            ticket = structured(response)
            if ticket is not None:
                self.runs.add(ticket["command_id"])
            return response
        command_id = args.get("command_id")
        if isinstance(command_id, str) and command_id in self.runs:
            return self.forward(as_agent)
        return self.forward(request)


@_variant(
    "An agent with osfoundry:read only may run Graphs (R2).",
    ["R2-read-token-cannot-run", "R2-insufficient-scope-403"],
)
def read_token_can_run() -> Wrapped:
    """The run scope is not enforced."""
    return _ReadTokenRuns()


class _BareChallenge(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        if response.status == 401 and "www-authenticate" in response.headers:
            headers = {**response.headers, "www-authenticate": 'Bearer realm="osfoundry"'}
            return Response(response.status, headers, response.body)
        return response


@_variant(
    "401s carry a challenge without resource_metadata or scope (R2).", ["R2-unauthenticated-401"]
)
def bare_challenge() -> Wrapped:
    """The 401 challenge names neither the metadata URL nor the scope."""
    return _BareChallenge()


class _QueryTokenAccepted(Wrapped):
    def handle(self, request: Request) -> Response:
        pairs = [p.split("=", 1) for p in request.query.split("&") if "=" in p]
        token = next((v for k, v in pairs if k == "access_token"), None)
        if token is None or request.header("authorization"):
            return self.forward(request)
        return self.forward(with_token(request, token)._replace(query=""))


@_variant("A token in the query string is accepted (R2).", ["R2-query-token-refused"])
def query_token_accepted() -> Wrapped:
    """?access_token= works like the Authorization header."""
    return _QueryTokenAccepted()


class _AgentActsAsDesktop(Wrapped):
    def handle(self, request: Request) -> Response:
        made = self.made
        desktops = {
            made.agent_token: made.desktop_token,
            made.other_agent_token: made.desktop_token,
            made.read_token: made.desktop_token,
            made.stranger_token: made.stranger_desktop_token,
        }
        desktop = desktops.get(token_of(request) or "")
        if relay_route(request) is not None and desktop is not None:
            return self.forward(with_token(request, desktop))
        return self.forward(request)


@_variant(
    "An agent's token works on the relay API as its owner's desktop (R12).", ["R12-agent-token-403"]
)
def agent_acts_as_desktop() -> Wrapped:
    """Agents can sync, start and complete."""
    return _AgentActsAsDesktop()


class _RelayNoToken403(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        if relay_route(request) is not None and response.status == 401:
            return Response(403, dict(response.headers), response.body)
        return response


@_variant(
    "The relay API answers 403 instead of 401 without a valid token (R12).",
    ["R12-no-token-401", "R12-unknown-token-401"],
)
def relay_no_token_403() -> Wrapped:
    """Unauthenticated relay calls get 403."""
    return _RelayNoToken403()


# ---------------------------------------------------------------------- schema / transport
class _SchemaDrift(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        message = rpc_message(request)
        if not message or message.get("method") != "tools/list" or response.status != 200:
            return response
        payload = json_body(response.body)
        for tool in payload.get("result", {}).get("tools", []):
            if tool.get("name") == "run_graph_session":
                tool["inputSchema"]["properties"]["idempotency_key"]["minLength"] = 1
        return with_json(response, payload)


@_variant(
    "tools/list says idempotency_key needs 1 character, not 8 (D3).", ["D3-run-graph-session"]
)
def tools_list_schema_drift() -> Wrapped:
    """The listing drifts from the documented schema."""
    return _SchemaDrift()


class _NoStructuredContent(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        if tool_call(request) is None or structured(response) is None:
            return response
        payload = json_body(response.body)
        del payload["result"]["structuredContent"]
        return with_json(response, payload)


@_variant(
    "Tool results carry only content[0].text, no structuredContent (R3).", ["R3-success-shape"]
)
def no_structured_content() -> Wrapped:
    """Results lack structuredContent."""
    return _NoStructuredContent()


_DOMAIN = frozenset(
    {
        RUN_NOT_FOUND,
        "Graph session not found or access removed",
        "Project not found or access removed",
        "idempotency_key was already used with different arguments",
    }
)


class _ErrorsAsRpcErrors(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        text = tool_error_text(response)
        if text not in _DOMAIN:
            return response
        error = {"code": -32000, "message": text}
        return with_json(response, {"jsonrpc": "2.0", "id": _msg_id(request), "error": error})


@_variant("Domain errors come as JSON-RPC errors, not isError results (R3).", ["R3-error-shape"])
def errors_as_rpc_errors() -> Wrapped:
    """isError results are replaced by JSON-RPC error objects."""
    return _ErrorsAsRpcErrors()


class _UnknownMethodWrongCode(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        payload = json_body(response.body)
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict) and error.get("code") == -32601:
            error["code"] = -32600
            return with_json(response, payload)
        return response


@_variant("An unknown method gets -32600 instead of -32601 (R1).", ["R1-unknown-method"])
def unknown_method_wrong_code() -> Wrapped:
    """The wrong JSON-RPC error code for unknown methods."""
    return _UnknownMethodWrongCode()


class _Notification200(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        message = rpc_message(request)
        if message is not None and "id" not in message and response.status == 202:
            return Response(200, {"content-type": "application/json"}, b"{}")
        return response


@_variant(
    "Notifications are answered 200 with a body instead of 202 (R1).", ["R1-notification-202"]
)
def notification_200() -> Wrapped:
    """notifications/initialized gets 200 {}."""
    return _Notification200()


# ---------------------------------------------------------------------- queue
class _NoPollAfter(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        call = tool_call(request)
        ticket = structured(response) if call and call[0] == "run_graph_session" else None
        if ticket is None:
            return response
        ticket.pop("poll_after_seconds", None)
        return with_structured(response, ticket)


@_variant("The ticket lacks poll_after_seconds (R4).", ["R4-ticket-fields"])
def ticket_without_poll_after() -> Wrapped:
    """run_graph_session's ticket misses a field."""
    return _NoPollAfter()


class _CommandIdsNotUuids(Wrapped):
    """Every command id the server hands out is shown as ``cmd_`` + 24 hex characters."""

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.shown: dict[str, str] = {}  # real id -> shown id
        self.real: dict[str, str] = {}  # shown id -> real id

    def _show(self, data: bytes) -> bytes:
        for real, shown in self.shown.items():
            if real.encode() in data:
                data = data.replace(real.encode(), shown.encode())
        return data

    def _unshow(self, text: str) -> str:
        for shown, real in self.real.items():
            if shown in text:
                text = text.replace(shown, real)
        return text

    def handle(self, request: Request) -> Response:
        body = self._unshow(request.body.decode("utf-8", "surrogateescape"))
        request = request._replace(
            path=self._unshow(request.path), body=body.encode("utf-8", "surrogateescape")
        )
        response = self.forward(request)
        call = tool_call(request)
        ticket = structured(response) if call and call[0] == "run_graph_session" else None
        real = ticket.get("command_id") if ticket else None
        if is_uuid(real) and real not in self.shown:
            assert isinstance(real, str)
            shown = "cmd_" + real.replace("-", "")[:24]
            self.shown[real], self.real[shown] = shown, real
        return Response(response.status, dict(response.headers), self._show(response.body))


@_variant("Command ids are not UUIDs (D9).", ["D9-command-id-uuid", "R4-ticket-fields"])
def command_ids_not_uuids() -> Wrapped:
    """run_graph_session hands out 'cmd_...' ids the relay would refuse."""
    return _CommandIdsNotUuids()


class _ListingRewritten(Wrapped):
    """``list_graph_sessions`` shows :meth:`listed` instead of the server's own list."""

    def listed(self, project_id: str, limit: Any) -> list[dict[str, Any]] | None:
        """The sessions to show (``None``: the server's answer)."""
        return None

    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        call = tool_call(request)
        answer = structured(response) if call and call[0] == "list_graph_sessions" else None
        if answer is None or call is None:
            return response
        sessions = self.listed(answer["project_id"], call[1].get("limit"))
        if sessions is None:
            return response
        return with_structured(response, {**answer, "sessions": sessions})


class _ListIgnoresLimit(_ListingRewritten):
    def listed(self, project_id: str, limit: Any) -> list[dict[str, Any]] | None:
        return self.ledger.shared.get(project_id)


@_variant(
    "list_graph_sessions ignores limit and its default of 50 (R8).",
    ["R8-limit", "R8-default-limit"],
)
def list_ignores_limit() -> Wrapped:
    """Every shared session is listed, whatever the limit."""
    return _ListIgnoresLimit()


class _Completions(Wrapped):
    """Remembers what the desktop posted, to show it in ``get_graph_run`` views.

    ``patches[command_id]`` holds fields a run's view shows instead of the server's.
    """

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.patches: dict[str, dict[str, Any]] = {}

    def handle(self, request: Request) -> Response:
        route = relay_route(request)
        if route is not None and route[0] == "complete" and route[1] is not None:
            return self.complete(request, route[1], json_body(request.body))
        response = self.forward(request)
        call = tool_call(request)
        view = structured(response) if call and call[0] == "get_graph_run" else None
        patch = self.patches.get(view.get("command_id", "")) if view else None
        if view is None or not patch:
            return response
        return with_structured(response, self.patched(view, patch))

    def patched(self, view: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        """The view with ``patch`` applied (a field patched to ``None`` is dropped)."""
        out = {**view, **patch}
        return {k: v for k, v in out.items() if not (k in patch and patch[k] is None)}

    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        """A relay ``complete`` request (by default, passed on)."""
        return self.forward(request)


class _ErrorNotCut(_Completions):
    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        response = self.forward(request)
        if response.status == 200 and isinstance(body, dict) and isinstance(body.get("error"), str):
            self.patches[command_id] = {"error": body["error"]}
        return response

    def patched(self, view: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        # A run the agent cancelled while queued stores no completion, so no error.
        return {**view, **patch} if "error" in view else view


@_variant(
    "Errors longer than 2,000 characters are stored and served whole (R6).",
    ["R6-error-at-most-2000"],
)
def error_not_cut() -> Wrapped:
    """The 2,000-character error bound is not applied."""
    return _ErrorNotCut()


# ---------------------------------------------------------------------- cancel
class _CancelledStillDelivered(Wrapped):
    """Runs cancelled while queued stay in every later sync of their project."""

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.kept: dict[str, list[dict[str, Any]]] = {}  # project id -> their sync entries

    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        if call is not None and call[0] == "cancel_graph_run":
            before = self.peek_view(request, call[1].get("command_id"))
            response = self.forward(request)
            after = structured(response)
            queued = self.queued(call[1].get("command_id"))
            if (
                before is not None
                and before.get("status") == "queued"
                and after is not None
                and after.get("status") == "cancelled"
                and queued is not None
                and queued.project_id is not None
            ):
                self.kept.setdefault(queued.project_id, []).append(queued.sync_entry)
            return response
        response = self.forward(request)
        if relay_route(request) != ("sync", None) or response.status != 200:
            return response
        answer = json_body(response.body)
        kept = self.kept.get(answer.get("project_id"), [])
        present = {c.get("command_id") for c in answer["commands"]}
        commands = answer["commands"] + [c for c in kept if c["command_id"] not in present]
        answer["commands"] = sorted(commands, key=lambda c: str(c.get("queued_at")))
        return with_json(response, answer)


@_variant(
    "A run cancelled while queued is still delivered to the desktop (D8).", ["D8-cancel-queued"]
)
def cancelled_still_delivered() -> Wrapped:
    """The queue keeps cancelled commands."""
    return _CancelledStillDelivered()


class _QueuedCancelOnlyFlags(Wrapped):
    """A queued run's cancel only sets its flag; the server hears of it once it started."""

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.flagged: set[str] = set()

    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        route = relay_route(request)
        if call is not None and call[0] == "cancel_graph_run":
            view, seen = self.peek(request, call[1].get("command_id"))
            if view is not None and view.get("status") == "queued":
                self.flagged.add(view["command_id"])
                answer = {"command_id": view["command_id"], "status": "queued"}
                flagged = {**answer, "cancel_requested": True}
                return tool_result(_msg_id(request), flagged, like=seen, request=request)
            return self.forward(request)
        response = self.forward(request)
        if call is not None and call[0] == "get_graph_run":
            view = structured(response)
            if view is not None and view.get("command_id") in self.flagged:
                return with_structured(response, {**view, "cancel_requested": True})
            return response
        if route is None or route[1] not in self.flagged or response.status != 200:
            return response
        answer = json_body(response.body)
        queued = self.queued(route[1])
        if route[0] == "start" and answer.get("status") == "running" and queued is not None:
            # Now running: the flag is the running cancel the server knows.
            self.call_tool(request, queued.token, "cancel_graph_run", {"command_id": route[1]})
        elif route[0] == "control" and answer.get("status") == "queued":
            return with_json(response, {**answer, "cancel_requested": True})
        return response


@_variant(
    "Cancelling a queued run only sets a flag; the run stays queued (D8, R7).",
    [
        "D8-cancel-queued",
        "R7-cancel-queued-answer",
        "R6-cancelled-queued-view",
        "R9-start-cancelled",
        "R11-cancelled-after-agent-cancel",
    ],
)
def queued_cancel_only_flags() -> Wrapped:
    """A queued cancel is treated like a running one."""
    return _QueuedCancelOnlyFlags()


class _RunningCancelIgnored(Wrapped):
    def handle(self, request: Request) -> Response:
        call = tool_call(request)
        if call is not None and call[0] == "cancel_graph_run":
            view, seen = self.peek(request, call[1].get("command_id"))
            if view is not None and view.get("status") == "running":
                answer = {"command_id": view["command_id"], "status": "running"}
                ignored = {**answer, "cancel_requested": False}
                return tool_result(_msg_id(request), ignored, like=seen, request=request)
        return self.forward(request)


@_variant(
    "Cancelling a running run does nothing (D8, R7, R10).",
    ["D8-cancel-running", "R7-cancel-running-answer", "R10-control"],
)
def running_cancel_ignored() -> Wrapped:
    """The control poll never sees a cancel."""
    return _RunningCancelIgnored()


# ---------------------------------------------------------------------- re-check
class _RecheckRefused(_Completions):
    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        control = self.peek_control(request, command_id)
        if (
            control is not None
            and control.get("status") == "queued"
            and isinstance(body, dict)
            and body.get("status") == "cancelled"
        ):
            return relay_error(409, "a command that never started cannot be cancelled by the relay")
        return self.forward(request)


@_variant(
    "The relay's re-check cancellation of a never-started command is refused (D13).",
    ["D13-unticked", "D13-project-disabled", "D13-slug-changed"],
)
def recheck_cancel_refused() -> Wrapped:
    """Only the agent may cancel a queued run."""
    return _RecheckRefused()


class _SyncCurrentSlug(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        if relay_route(request) != ("sync", None) or response.status != 200:
            return response
        uploaded = session_records((rpc_message(request) or {}).get("sessions"))
        slugs = {s["graph_session_id"]: s["slug"] for s in uploaded}
        answer = json_body(response.body)
        for command in answer["commands"]:
            command["slug"] = slugs.get(command["graph_session_id"], command["slug"])
        return with_json(response, answer)


@_variant(
    "The sync delivers commands with the session's current slug, hiding renames (D13).",
    ["D13-slug-changed"],
)
def sync_current_slug() -> Wrapped:
    """A rename between queueing and run cannot be seen by the relay."""
    return _SyncCurrentSlug()


# ---------------------------------------------------------------------- truncation
#: The reference server refuses request bodies over 1 MiB before reading them.
_BODY_CAP = 1024 * 1024


class _ResultKeptAside(_Completions):
    """Completions the server refuses for their ``result`` are stored without it; the
    views show the result anyway."""

    def keep_aside(self, body: dict[str, Any], refused: Response) -> bool:
        """Whether to store ``body`` without its result after the server's ``refused``."""
        return False

    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        response = self.forward(request)
        if (
            response.status in (400, 413)
            and isinstance(body, dict)
            and "result" in body
            and len(request.body) <= _BODY_CAP
            and self.keep_aside(body, response)
        ):
            rest = {k: v for k, v in body.items() if k != "result"}
            stored = self.forward(with_body(request, rest))
            if stored.status == 200:
                self.patches[command_id] = {"result": body["result"]}
            return stored
        return response


class _NoBound(_ResultKeptAside):
    def keep_aside(self, body: dict[str, Any], refused: Response) -> bool:
        return refused.status == 413


@_variant(
    "Completions over 100,000 characters are accepted (R11).",
    ["R11-oversized-413", "R11-size-utf16-units"],
)
def oversized_accepted() -> Wrapped:
    """No 413."""
    return _NoBound()


class _CountsCodePoints(_ResultKeptAside):
    def keep_aside(self, body: dict[str, Any], refused: Response) -> bool:
        code_points = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
        return refused.status == 413 and code_points <= 100_000


@_variant(
    "The bound counts code points, so an emoji counts 1 instead of 2 (R11).",
    ["R11-size-utf16-units"],
)
def size_counts_code_points() -> Wrapped:
    """Python's len() instead of JavaScript's length."""
    return _CountsCodePoints()


class _CountsRawBytes(Wrapped):
    def handle(self, request: Request) -> Response:
        route = relay_route(request)
        if route is not None and route[0] == "complete" and len(request.body) > 100_000:
            return relay_error(413, "completion over 100000 bytes")
        return self.forward(request)


@_variant(
    "The bound counts the request's bytes, not JSON.stringify's characters (R11, D18).",
    ["D18-boundary-japanese", "R11-size-utf16-units", "R11-size-parsed-not-raw"],
)
def size_counts_bytes() -> Wrapped:
    """A Japanese result at the boundary (300 kB) is refused."""
    return _CountsRawBytes()


class _PartialBesideTruncated(_ResultKeptAside):
    def keep_aside(self, body: dict[str, Any], refused: Response) -> bool:
        return refused.status == 400 and body.get("result_truncated") is True


@_variant(
    "A partial result is stored and served beside result_truncated (D18).",
    ["D18-truncated-no-partial"],
)
def partial_result_served() -> Wrapped:
    """result_truncated: true comes back with a partial result."""
    return _PartialBesideTruncated()


# ---------------------------------------------------------------------- relay API
_TERMINAL = ("completed", "failed", "cancelled")
_REPORTED = ("result", "result_truncated", "error", "total_tokens", "reported_cost")


class _FirstCompletion(_Completions):
    """Knows each run's stored completion: the first one accepted before it ended."""

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.stored: dict[str, dict[str, Any]] = {}

    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        control = self.peek_control(request, command_id)
        response = self.forward(request)
        ended = control is None or control.get("status") in _TERMINAL
        if response.status == 200 and not ended and isinstance(body, dict):
            self.stored[command_id] = body
        return response


class _TerminalOverwritten(_FirstCompletion):
    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        response = super().complete(request, command_id, body)
        stored = self.stored.get(command_id)
        if (
            response.status != 409
            or stored is None
            or not isinstance(body, dict)
            or body.get("result") == stored.get("result")
        ):
            return response
        self.stored[command_id] = body
        patch: dict[str, Any] = {"status": body.get("status")}
        patch.update({k: body.get(k) for k in _REPORTED})
        if isinstance(body.get("execution_id"), str):
            patch["execution_id"] = body["execution_id"]
        self.patches[command_id] = patch
        return relay_answer(200, {"status": body.get("status")})


@_variant("A different completion overwrites a terminal run (R11).", ["R11-conflict-409"])
def terminal_overwritten() -> Wrapped:
    """Terminal runs change again."""
    return _TerminalOverwritten()


class _RedeliveryRefused(_FirstCompletion):
    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        stored = self.stored.get(command_id)
        if stored is not None:
            return relay_error(409, f"command {command_id} is already {stored.get('status')}")
        return super().complete(request, command_id, body)


@_variant(
    "The same completion posted twice gets 409 (R11).",
    ["R11-redelivery-200", "R11-concurrent-same-completion"],
)
def redelivery_refused() -> Wrapped:
    """Outbox redelivery fails."""
    return _RedeliveryRefused()


class _NeverStartedCompleted(_Completions):
    def complete(self, request: Request, command_id: str, body: Any) -> Response:
        control = self.peek_control(request, command_id)
        if (
            control is not None
            and control.get("status") == "queued"
            and isinstance(body, dict)
            and body.get("status") == "completed"
        ):
            execution_id = body.get("execution_id")
            if not isinstance(execution_id, str) or not execution_id:
                execution_id = "osf-variant-start"
            start = request._replace(path=request.path.rsplit("/", 1)[0] + "/start")
            self.forward(with_body(start, {"execution_id": execution_id}))
        return self.forward(request)


@_variant(
    "A queued command may be completed without being started (R11).",
    ["R11-never-started-completed-refused"],
)
def never_started_completed() -> Wrapped:
    """completed is accepted for a never-started command."""
    return _NeverStartedCompleted()


class _StartRestartsTerminal(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        route = relay_route(request)
        if route is None or route[0] != "start" or route[1] is None or response.status != 409:
            return response
        control = self.peek_control(request, route[1])
        if control is not None and control.get("status") in ("completed", "failed"):
            return relay_answer(200, {"status": control["status"]})
        return response


@_variant("Starting a completed or failed command answers 200 (R9).", ["R9-start-terminal-409"])
def start_terminal_ok() -> Wrapped:
    """No 409 on start."""
    return _StartRestartsTerminal()


class _SyncNewestFirst(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        if relay_route(request) != ("sync", None) or response.status != 200:
            return response
        answer = json_body(response.body)
        answer["commands"].reverse()
        return with_json(response, answer)


@_variant("The sync lists queued commands newest first (D10).", ["D10-sync-oldest-first"])
def sync_newest_first() -> Wrapped:
    """The relay runs the newest command first."""
    return _SyncNewestFirst()


class _SharedByWrapper(_ListingRewritten):
    """Lists what :attr:`shown` says is shared (``limit`` applied, 50 by default)."""

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner)
        self.shown: dict[str, list[dict[str, Any]]] = {}

    def listed(self, project_id: str, limit: Any) -> list[dict[str, Any]] | None:
        shown = self.shown.get(project_id)
        return None if shown is None else shown[: 50 if limit is None else limit]


class _SyncMerges(_SharedByWrapper):
    def handle(self, request: Request) -> Response:
        response = super().handle(request)
        if relay_route(request) == ("sync", None) and response.status == 200:
            project_id = json_body(response.body)["project_id"]
            merged = {s["graph_session_id"]: s for s in self.shown.get(project_id, [])}
            for session in self.ledger.shared.get(project_id, []):
                merged[session["graph_session_id"]] = session
            self.shown[project_id] = list(merged.values())
        return response


@_variant(
    "A sync adds to the shared sessions instead of replacing them (D10).", ["D10-sync-replaces"]
)
def sync_merges() -> Wrapped:
    """Un-shared sessions stay listed."""
    return _SyncMerges()


class _SyncOver100(_SharedByWrapper):
    def handle(self, request: Request) -> Response:
        body = rpc_message(request) if relay_route(request) == ("sync", None) else None
        sessions = body.get("sessions") if body is not None else None
        if body is None or not isinstance(sessions, list):
            return super().handle(request)
        if len(sessions) <= 100:
            response = super().handle(request)
            if response.status == 200:
                self.shown.pop(json_body(response.body)["project_id"], None)
            return response
        response = super().handle(with_body(request, {**body, "sessions": sessions[:100]}))
        if response.status == 200:
            self.shown[json_body(response.body)["project_id"]] = session_records(sessions)
        return response


@_variant("A sync of more than 100 sessions is accepted (D10).", ["D10-sync-max-100"])
def sync_over_100_accepted() -> Wrapped:
    """No 400 for 101 sessions."""
    return _SyncOver100()


class _OtherOwner403(Wrapped):
    def handle(self, request: Request) -> Response:
        response = self.forward(request)
        route = relay_route(request)
        queued = self.queued(route[1]) if route else None
        if (
            response.status == 404
            and queued is not None
            and queued.account != self.account_of(token_of(request))
        ):
            return relay_error(403, "this command belongs to another owner")
        return response


@_variant(
    "Another owner's command gets 403 instead of 404 on the relay API (R13).",
    ["R13-other-owner-404"],
)
def other_owner_403() -> Wrapped:
    """The relay API confirms that a command id exists."""
    return _OtherOwner403()
