"""Deliberately broken reference servers: proof that the conformance suite has teeth.

Each function here is a server factory for ``--osf-target=embedded:MODULE:FACTORY``
(``--osf-target=embedded:tests.conformance.variants:other_agent_reads_run``
runs the suite against the first one) that returns the kit's
:class:`~pytest_osfoundry.server.ReferenceServer` with *one* rule broken, by
overriding one small method of
:class:`~pytest_osfoundry.server.ServerState` or by rewriting one kind of HTTP
request or response. :data:`VARIANTS` lists them with what each breaks and exactly
which checks must fail against it; the kit's own tests run the whole suite against
every variant and assert that those checks fail and no other does.

They double as examples: a server that behaves like one of these is wrong in the way
its entry says.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_osfoundry._ids import is_uuid
from pytest_osfoundry._jslength import js_stringify_length
from pytest_osfoundry._vocabulary import RUN_NOT_FOUND
from pytest_osfoundry._vocabulary import TERMINAL_STATUSES as TERMINAL
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import ReferenceServer, ServerState
from pytest_osfoundry.server._auth import bearer_token
from pytest_osfoundry.server._relay_api import RelayApi
from pytest_osfoundry.server._state import (
    Account,
    Agent,
    Conflict,
    DomainError,
    NotFound,
    TooLarge,
)
from pytest_osfoundry.server._tools import RUN_SCOPE

__all__ = ["TIMING_VARIANTS", "VARIANTS", "Variant", "reference"]

_F = TypeVar("_F", bound=Callable[[], ReferenceServer])


@dataclass(frozen=True)
class Variant:
    """A broken server: its factory, what it breaks, and the checks that must fail."""

    name: str
    breaks: str
    fails: frozenset[str]
    factory: Callable[[], ReferenceServer]

    @property
    def target(self) -> str:
        """The ``--osf-target`` value that runs the suite against this variant."""
        return f"embedded:{__name__}:{self.name}"


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


def _with(state: type[ServerState]) -> ReferenceServer:
    return ReferenceServer(state=state())


class _Rewriting(ReferenceServer):
    """A reference server whose requests or responses are rewritten on the way."""

    def rewrite_request(self, request: Request) -> Request:
        """The request the reference server sees."""
        return request

    def rewrite_response(self, request: Request, response: Response) -> Response:
        """The response the caller sees."""
        return response

    def __call__(self, request: Request) -> Response:
        request = self.rewrite_request(request)
        return self.rewrite_response(request, super().__call__(request))


def _message(request: Request) -> dict[str, Any] | None:
    try:
        data = json.loads(request.body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _json_body(response: Response) -> Any:
    try:
        return json.loads(response.body)
    except ValueError:
        return None


def _replace_body(request: Request, message: Mapping[str, Any]) -> Request:
    return Request(
        request.method, request.path, request.headers, json.dumps(message).encode(), request.query
    )


def _with_json(response: Response, payload: Any) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(response.status, dict(response.headers), body)


# ---------------------------------------------------------------------- access (D6)
class _OtherAgentReadsRun(ServerState):
    def get_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if run is None:
                raise NotFound(RUN_NOT_FOUND)
            return self._run_view(run)


@_variant(
    "get_graph_run shows any caller any run (D6).", ["D6-get-other-agent", "D6-get-other-account"]
)
def other_agent_reads_run() -> ReferenceServer:
    """Another agent (or account) reading a real command id gets the run."""
    return _with(_OtherAgentReadsRun)


class _OtherAgentAnsweredDifferently(ServerState):
    def get_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if run is not None and run.agent_id != agent.agent_id:
                raise NotFound("Graph run was started by another Connected agent")
            return super().get_graph_run(agent, command_id)


@_variant(
    "Another agent's real command id gets a different error than an unknown id (D6).",
    ["D6-get-other-agent", "D6-get-other-account"],
)
def other_agent_answered_differently() -> ReferenceServer:
    """'Not yours' and 'does not exist' are told apart."""
    return _with(_OtherAgentAnsweredDifferently)


class _OtherAgentCancels(ServerState):
    def cancel_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if run is None:
                raise NotFound(RUN_NOT_FOUND)
            owner = self.agents[run.agent_id]
            return super().cancel_graph_run(owner, command_id)


@_variant(
    "cancel_graph_run cancels anyone's run (D6).",
    ["D6-cancel-other-agent", "D6-cancel-other-account"],
)
def other_agent_cancels() -> ReferenceServer:
    """A cancel works on someone else's run."""
    return _with(_OtherAgentCancels)


class _MalformedIdsTold(ServerState):
    def _own_run(self, agent: Agent, command_id: str) -> Any:
        if not is_uuid(command_id):
            raise NotFound("command_id must be a UUID")
        return super()._own_run(agent, command_id)


@_variant(
    "A malformed command id gets its own error message (D6).",
    ["D6-get-malformed-id", "D6-cancel-malformed-id", "R7-cancel-unknown"],
)
def malformed_ids_told() -> ReferenceServer:
    """Malformed ids are answered differently from unknown UUIDs."""
    return _with(_MalformedIdsTold)


class _SlowForOthers(ServerState):
    def get_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        run = self.runs.get(command_id)
        if run is not None and run.agent_id != agent.agent_id:
            time.sleep(0.015)  # e.g. a permission lookup only real runs go through
        return super().get_graph_run(agent, command_id)


@_variant(
    "Another agent's real command id is answered 15 ms slower than an unknown one (D6).",
    ["D6-timing"],
    TIMING_VARIANTS,
)
def timing_leak() -> ReferenceServer:
    """Same bytes, different latency: a leaked id is confirmed by timing."""
    return _with(_SlowForOthers)


# ---------------------------------------------------------------------- idempotency
class _IdempotencyIgnored(ServerState):
    def run_graph_session(
        self,
        agent: Agent,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            self._keys.pop((agent.agent_id, idempotency_key), None)
            return super().run_graph_session(agent, graph_session_id, idempotency_key, arguments)


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
def idempotency_ignored() -> ReferenceServer:
    """Idempotency keys are ignored."""
    return _with(_IdempotencyIgnored)


class _KeysShared(ServerState):
    def run_graph_session(
        self,
        agent: Agent,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            shared = self._keys.get(("*", idempotency_key))
            if shared is not None:
                self._keys[(agent.agent_id, idempotency_key)] = shared
            ticket = super().run_graph_session(agent, graph_session_id, idempotency_key, arguments)
            self._keys[("*", idempotency_key)] = self._keys[(agent.agent_id, idempotency_key)]
            return ticket


@_variant("Idempotency keys are shared by all agents (R5).", ["R5-key-per-agent"])
def keys_shared_across_agents() -> ReferenceServer:
    """Another agent's identical key replays the first agent's run."""
    return _with(_KeysShared)


class _ShortKeyAccepted(_Rewriting):
    def rewrite_request(self, request: Request) -> Request:
        message = _message(request)
        params = message.get("params") if message else None
        args = params.get("arguments") if isinstance(params, dict) else None
        key = args.get("idempotency_key") if isinstance(args, dict) else None
        if (
            message is not None
            and isinstance(args, dict)
            and isinstance(key, str)
            and len(key) == 7
        ):
            args["idempotency_key"] = key + "~"
            return _replace_body(request, message)
        return request


@_variant("A 7-character idempotency_key is accepted (D7).", ["D7-key-too-short"])
def short_key_accepted() -> ReferenceServer:
    """run_graph_session takes 7-character keys (the listing still says 8)."""
    return _ShortKeyAccepted()


# ---------------------------------------------------------------------- scopes
class _ReadTokenRuns(ServerState):
    def add_agent(
        self,
        account_id: str,
        project_ids: Iterable[str],
        scopes: Iterable[str],
        agent_id: str | None = None,
    ) -> Agent:
        return super().add_agent(account_id, project_ids, {*scopes, RUN_SCOPE}, agent_id)


@_variant(
    "An agent with osfoundry:read only may run Graphs (R2).",
    ["R2-read-token-cannot-run", "R2-insufficient-scope-403"],
)
def read_token_can_run() -> ReferenceServer:
    """The run scope is not enforced."""
    return _with(_ReadTokenRuns)


class _BareChallenge(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        if response.status == 401 and "www-authenticate" in response.headers:
            headers = {**response.headers, "www-authenticate": 'Bearer realm="osfoundry"'}
            return Response(response.status, headers, response.body)
        return response


@_variant(
    "401s carry a challenge without resource_metadata or scope (R2).", ["R2-unauthenticated-401"]
)
def bare_challenge() -> ReferenceServer:
    """The 401 challenge names neither the metadata URL nor the scope."""
    return _BareChallenge()


class _QueryTokenAccepted(_Rewriting):
    def rewrite_request(self, request: Request) -> Request:
        pairs = [p.split("=", 1) for p in request.query.split("&") if "=" in p]
        token = next((v for k, v in pairs if k == "access_token"), None)
        if token is None or request.header("authorization"):
            return request
        headers = {**request.headers, "authorization": f"Bearer {token}"}
        return Request(request.method, request.path, headers, request.body, "")


@_variant("A token in the query string is accepted (R2).", ["R2-query-token-refused"])
def query_token_accepted() -> ReferenceServer:
    """?access_token= works like the Authorization header."""
    return _QueryTokenAccepted()


class _AgentRelayApi(RelayApi):
    def _authenticate(self, request: Request) -> Account | Response:
        cred = self.tokens.lookup(
            bearer_token(request.header("authorization")), self.state.clock.now()
        )
        if cred is not None and cred.kind == "agent":
            agent = self.state.agents.get(cred.principal_id)
            if agent is not None:
                return self.state.accounts[agent.account_id]
        return super()._authenticate(request)


class _AgentActsAsDesktop(ReferenceServer):
    def __init__(self) -> None:
        super().__init__()
        self.relay = _AgentRelayApi(self.state, self.tokens)


@_variant(
    "An agent's token works on the relay API as its owner's desktop (R12).", ["R12-agent-token-403"]
)
def agent_acts_as_desktop() -> ReferenceServer:
    """Agents can sync, start and complete."""
    return _AgentActsAsDesktop()


class _RelayNoToken403(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        if RelayApi.owns(request.path) and response.status == 401:
            return Response(403, dict(response.headers), response.body)
        return response


@_variant(
    "The relay API answers 403 instead of 401 without a valid token (R12).",
    ["R12-no-token-401", "R12-unknown-token-401"],
)
def relay_no_token_403() -> ReferenceServer:
    """Unauthenticated relay calls get 403."""
    return _RelayNoToken403()


# ---------------------------------------------------------------------- schema / transport
class _SchemaDrift(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        message = _message(request)
        if not message or message.get("method") != "tools/list" or response.status != 200:
            return response
        payload = _json_body(response)
        for tool in payload.get("result", {}).get("tools", []):
            if tool.get("name") == "run_graph_session":
                tool["inputSchema"]["properties"]["idempotency_key"]["minLength"] = 1
        return _with_json(response, payload)


@_variant(
    "tools/list says idempotency_key needs 1 character, not 8 (D3).", ["D3-run-graph-session"]
)
def tools_list_schema_drift() -> ReferenceServer:
    """The listing drifts from the documented schema."""
    return _SchemaDrift()


class _NoStructuredContent(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        message = _message(request)
        if not message or message.get("method") != "tools/call" or response.status != 200:
            return response
        payload = _json_body(response)
        result = payload.get("result") if isinstance(payload, dict) else None
        if isinstance(result, dict) and "structuredContent" in result:
            del result["structuredContent"]
            return _with_json(response, payload)
        return response


@_variant(
    "Tool results carry only content[0].text, no structuredContent (R3).", ["R3-success-shape"]
)
def no_structured_content() -> ReferenceServer:
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


class _ErrorsAsRpcErrors(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        payload = _json_body(response) if response.status == 200 else None
        if not isinstance(payload, dict):
            return response
        result = payload.get("result")
        if (
            isinstance(result, dict)
            and result.get("isError") is True
            and result["content"][0]["text"] in _DOMAIN
        ):
            text = result["content"][0]["text"]
            return _with_json(
                response,
                {"jsonrpc": "2.0", "id": payload["id"], "error": {"code": -32000, "message": text}},
            )
        return response


@_variant("Domain errors come as JSON-RPC errors, not isError results (R3).", ["R3-error-shape"])
def errors_as_rpc_errors() -> ReferenceServer:
    """isError results are replaced by JSON-RPC error objects."""
    return _ErrorsAsRpcErrors()


class _UnknownMethodWrongCode(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        payload = _json_body(response)
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict) and error.get("code") == -32601:
            error["code"] = -32600
            return _with_json(response, payload)
        return response


@_variant("An unknown method gets -32600 instead of -32601 (R1).", ["R1-unknown-method"])
def unknown_method_wrong_code() -> ReferenceServer:
    """The wrong JSON-RPC error code for unknown methods."""
    return _UnknownMethodWrongCode()


class _Notification200(_Rewriting):
    def rewrite_response(self, request: Request, response: Response) -> Response:
        message = _message(request)
        if message is not None and "id" not in message and response.status == 202:
            return Response(200, {"content-type": "application/json"}, b"{}")
        return response


@_variant(
    "Notifications are answered 200 with a body instead of 202 (R1).", ["R1-notification-202"]
)
def notification_200() -> ReferenceServer:
    """notifications/initialized gets 200 {}."""
    return _Notification200()


# ---------------------------------------------------------------------- queue
class _NoPollAfter(ServerState):
    def _ticket(self, run: Any) -> dict[str, Any]:
        ticket = super()._ticket(run)
        del ticket["poll_after_seconds"]
        return ticket


@_variant("The ticket lacks poll_after_seconds (R4).", ["R4-ticket-fields"])
def ticket_without_poll_after() -> ReferenceServer:
    """run_graph_session's ticket misses a field."""
    return _with(_NoPollAfter)


class _CommandIdsNotUuids(ServerState):
    def run_graph_session(
        self,
        agent: Agent,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            ticket = super().run_graph_session(agent, graph_session_id, idempotency_key, arguments)
            old = ticket["command_id"]
            if not is_uuid(old):
                return ticket
            new = "cmd_" + old.replace("-", "")[:24]
            run = self.runs.pop(old)
            run.command_id = new
            self.runs[new] = run
            queue = self._queued[run.project_id]
            if old in queue:
                queue[new] = queue.pop(old)
            for entry in self._keys.values():
                if entry.command_id == old:
                    entry.command_id = new
            return self._ticket(run)


@_variant("Command ids are not UUIDs (D9).", ["D9-command-id-uuid", "R4-ticket-fields"])
def command_ids_not_uuids() -> ReferenceServer:
    """run_graph_session hands out 'cmd_...' ids the relay would refuse."""
    return _with(_CommandIdsNotUuids)


class _ListIgnoresLimit(ServerState):
    def list_graph_sessions(
        self, agent: Agent, project_id: str, limit: int | None = None
    ) -> dict[str, Any]:
        return super().list_graph_sessions(agent, project_id, 10_000)


@_variant(
    "list_graph_sessions ignores limit and its default of 50 (R8).",
    ["R8-limit", "R8-default-limit"],
)
def list_ignores_limit() -> ReferenceServer:
    """Every shared session is listed, whatever the limit."""
    return _with(_ListIgnoresLimit)


class _ErrorNotCut(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        with self._lock:
            answer = super().relay_complete(account, command_id, body)
            run = self.runs[command_id]
            if (
                run.completion is not None
                and isinstance(body, dict)
                and isinstance(body.get("error"), str)
            ):
                run.completion["error"] = body["error"]
            return answer


@_variant(
    "Errors longer than 2,000 characters are stored and served whole (R6).",
    ["R6-error-at-most-2000"],
)
def error_not_cut() -> ReferenceServer:
    """The 2,000-character error bound is not applied."""
    return _with(_ErrorNotCut)


# ---------------------------------------------------------------------- cancel
class _CancelledStillDelivered(ServerState):
    def cancel_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            before = self.runs.get(command_id)
            was_queued = before is not None and before.status == "queued"
            answer = super().cancel_graph_run(agent, command_id)
            if was_queued and before is not None:
                self._queued[before.project_id][command_id] = before
            return answer


@_variant(
    "A run cancelled while queued is still delivered to the desktop (D8).", ["D8-cancel-queued"]
)
def cancelled_still_delivered() -> ReferenceServer:
    """The queue keeps cancelled commands."""
    return _with(_CancelledStillDelivered)


class _QueuedCancelOnlyFlags(ServerState):
    def cancel_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            run = self._own_run(agent, command_id)
            if run.status in ("queued", "running"):
                run.cancel_requested = True
            return {
                "command_id": run.command_id,
                "status": run.status,
                "cancel_requested": run.cancel_requested,
            }


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
def queued_cancel_only_flags() -> ReferenceServer:
    """A queued cancel is treated like a running one."""
    return _with(_QueuedCancelOnlyFlags)


class _RunningCancelIgnored(ServerState):
    def cancel_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        with self._lock:
            run = self._own_run(agent, command_id)
            if run.status == "running":
                return {
                    "command_id": run.command_id,
                    "status": run.status,
                    "cancel_requested": False,
                }
            return super().cancel_graph_run(agent, command_id)


@_variant(
    "Cancelling a running run does nothing (D8, R7, R10).",
    ["D8-cancel-running", "R7-cancel-running-answer", "R10-control"],
)
def running_cancel_ignored() -> ReferenceServer:
    """The control poll never sees a cancel."""
    return _with(_RunningCancelIgnored)


# ---------------------------------------------------------------------- re-check
class _RecheckRefused(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if (
                run is not None
                and run.status == "queued"
                and isinstance(body, dict)
                and body.get("status") == "cancelled"
            ):
                raise Conflict("a command that never started cannot be cancelled by the relay")
            return super().relay_complete(account, command_id, body)


@_variant(
    "The relay's re-check cancellation of a never-started command is refused (D13).",
    ["D13-unticked", "D13-project-disabled", "D13-slug-changed"],
)
def recheck_cancel_refused() -> ReferenceServer:
    """Only the agent may cancel a queued run."""
    return _with(_RecheckRefused)


class _SyncCurrentSlug(ServerState):
    def relay_sync(self, account: Account, project_id: str, sessions: list[Any]) -> dict[str, Any]:
        with self._lock:
            answer = super().relay_sync(account, project_id, sessions)
            slugs = {s["graph_session_id"]: s["slug"] for s in self.projects[project_id].sessions}
            for command in answer["commands"]:
                command["slug"] = slugs.get(command["graph_session_id"], command["slug"])
            return answer


@_variant(
    "The sync delivers commands with the session's current slug, hiding renames (D13).",
    ["D13-slug-changed"],
)
def sync_current_slug() -> ReferenceServer:
    """A rename between queueing and run cannot be seen by the relay."""
    return _with(_SyncCurrentSlug)


# ---------------------------------------------------------------------- truncation
def _complete_measured(
    state: ServerState,
    account: Account,
    command_id: str,
    body: Any,
    measure: Callable[[dict[str, Any]], int] | None,
) -> dict[str, Any]:
    """The reference completion with the 100,000 bound measured by ``measure`` (or not at all)."""
    if isinstance(body, dict) and measure is not None and measure(body) > 100_000:
        raise TooLarge("completion is over 100000 characters")
    if isinstance(body, dict) and js_stringify_length(body) > 100_000:
        padded = copy.deepcopy(body)
        result = padded.pop("result", None)
        state_any: Any = state
        with state._lock:
            answer: dict[str, Any] = ServerState.relay_complete(
                state_any, account, command_id, padded
            )
            run = state.runs[command_id]
            if run.completion is not None and "result" in body:
                run.completion["result"] = result
            return answer
    return ServerState.relay_complete(state, account, command_id, body)


class _NoBound(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        return _complete_measured(self, account, command_id, body, None)


@_variant(
    "Completions over 100,000 characters are accepted (R11).",
    ["R11-oversized-413", "R11-size-utf16-units"],
)
def oversized_accepted() -> ReferenceServer:
    """No 413."""
    return _with(_NoBound)


class _CountsCodePoints(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        return _complete_measured(
            self,
            account,
            command_id,
            body,
            lambda b: len(json.dumps(b, ensure_ascii=False, separators=(",", ":"))),
        )


@_variant(
    "The bound counts code points, so an emoji counts 1 instead of 2 (R11).",
    ["R11-size-utf16-units"],
)
def size_counts_code_points() -> ReferenceServer:
    """Python's len() instead of JavaScript's length."""
    return _with(_CountsCodePoints)


class _CountsRawBytes(ReferenceServer):
    def __call__(self, request: Request) -> Response:
        if (
            RelayApi.owns(request.path)
            and request.path.endswith("/complete")
            and len(request.body) > 100_000
        ):
            return Response(
                413,
                {"content-type": "application/json"},
                b'{"error":"completion over 100000 bytes"}',
            )
        return super().__call__(request)


@_variant(
    "The bound counts the request's bytes, not JSON.stringify's characters (R11, D18).",
    ["D18-boundary-japanese", "R11-size-utf16-units", "R11-size-parsed-not-raw"],
)
def size_counts_bytes() -> ReferenceServer:
    """A Japanese result at the boundary (300 kB) is refused."""
    return _CountsRawBytes()


class _PartialBesideTruncated(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        both = isinstance(body, dict) and body.get("result_truncated") is True and "result" in body
        if not both:
            return super().relay_complete(account, command_id, body)
        with self._lock:
            stripped = {k: v for k, v in body.items() if k != "result"}
            answer = super().relay_complete(account, command_id, stripped)
            run = self.runs[command_id]
            if run.completion is not None:
                run.completion["result"] = copy.deepcopy(body["result"])
            return answer


@_variant(
    "A partial result is stored and served beside result_truncated (D18).",
    ["D18-truncated-no-partial"],
)
def partial_result_served() -> ReferenceServer:
    """result_truncated: true comes back with a partial result."""
    return _with(_PartialBesideTruncated)


# ---------------------------------------------------------------------- relay API
class _TerminalOverwritten(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if (
                run is not None
                and run.status in TERMINAL
                and run.completion is not None
                and isinstance(body, dict)
                and body.get("result") != run.completion.get("result")
            ):
                run.status, run.completion = "running", None
            return super().relay_complete(account, command_id, body)


@_variant("A different completion overwrites a terminal run (R11).", ["R11-conflict-409"])
def terminal_overwritten() -> ReferenceServer:
    """Terminal runs change again."""
    return _with(_TerminalOverwritten)


class _RedeliveryRefused(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if run is not None and run.completion is not None:
                raise Conflict(f"command {command_id} is already {run.status}")
            return super().relay_complete(account, command_id, body)


@_variant(
    "The same completion posted twice gets 409 (R11).",
    ["R11-redelivery-200", "R11-concurrent-same-completion"],
)
def redelivery_refused() -> ReferenceServer:
    """Outbox redelivery fails."""
    return _with(_RedeliveryRefused)


class _NeverStartedCompleted(ServerState):
    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        with self._lock:
            run = self.runs.get(command_id)
            if (
                run is not None
                and run.status == "queued"
                and isinstance(body, dict)
                and body.get("status") == "completed"
            ):
                run.status = "running"
            return super().relay_complete(account, command_id, body)


@_variant(
    "A queued command may be completed without being started (R11).",
    ["R11-never-started-completed-refused"],
)
def never_started_completed() -> ReferenceServer:
    """completed is accepted for a never-started command."""
    return _with(_NeverStartedCompleted)


class _StartRestartsTerminal(ServerState):
    def relay_start(self, account: Account, command_id: str, execution_id: Any) -> dict[str, Any]:
        with self._lock:
            run = self._owned_run(account, command_id)
            if run.status in ("completed", "failed"):
                return {"status": run.status}
            return super().relay_start(account, command_id, execution_id)


@_variant("Starting a completed or failed command answers 200 (R9).", ["R9-start-terminal-409"])
def start_terminal_ok() -> ReferenceServer:
    """No 409 on start."""
    return _with(_StartRestartsTerminal)


class _SyncNewestFirst(ServerState):
    def relay_sync(self, account: Account, project_id: str, sessions: list[Any]) -> dict[str, Any]:
        answer = super().relay_sync(account, project_id, sessions)
        answer["commands"].reverse()
        return answer


@_variant("The sync lists queued commands newest first (D10).", ["D10-sync-oldest-first"])
def sync_newest_first() -> ReferenceServer:
    """The relay runs the newest command first."""
    return _with(_SyncNewestFirst)


class _SyncMerges(ServerState):
    def relay_sync(self, account: Account, project_id: str, sessions: list[Any]) -> dict[str, Any]:
        with self._lock:
            project = self._owned_project(account, project_id)
            kept = {s["graph_session_id"]: s for s in project.sessions}
            answer = super().relay_sync(account, project_id, sessions)
            for session in project.sessions:
                kept[session["graph_session_id"]] = session
            project.sessions = list(kept.values())
            return answer


@_variant(
    "A sync adds to the shared sessions instead of replacing them (D10).", ["D10-sync-replaces"]
)
def sync_merges() -> ReferenceServer:
    """Un-shared sessions stay listed."""
    return _with(_SyncMerges)


class _SyncOver100(ServerState):
    def relay_sync(self, account: Account, project_id: str, sessions: list[Any]) -> dict[str, Any]:
        with self._lock:
            if isinstance(sessions, list) and len(sessions) > 100:
                answer = super().relay_sync(account, project_id, sessions[:100])
                self.share(project_id, sessions)
                return answer
            return super().relay_sync(account, project_id, sessions)


@_variant("A sync of more than 100 sessions is accepted (D10).", ["D10-sync-max-100"])
def sync_over_100_accepted() -> ReferenceServer:
    """No 400 for 101 sessions."""
    return _with(_SyncOver100)


class _Forbidden(DomainError):
    http_status = 403


class _OtherOwner403(ServerState):
    def _owned_run(self, account: Account, command_id: str) -> Any:
        run = self.runs.get(command_id)
        if run is not None and self.projects[run.project_id].account_id != account.account_id:
            raise _Forbidden("this command belongs to another owner")
        return super()._owned_run(account, command_id)


@_variant(
    "Another owner's command gets 403 instead of 404 on the relay API (R13).",
    ["R13-other-owner-404"],
)
def other_owner_403() -> ReferenceServer:
    """The relay API confirms that a command id exists."""
    return _with(_OtherOwner403)
