"""The context one check works in: a client per role, recorded exchanges, helpers.

The suite plays every role over real HTTP: the agents (MCP clients with the agent,
other-agent, read-only and stranger tokens, or none) and the owner's desktop (relay
clients with the desktop tokens). All of a check's requests go through one
:class:`~pytest_osfoundry.client.RecordingTransport`, so a failure can show the
exchanges that led to it and a ``curl`` line replaying the decisive one.

**Shared state, and how checks stay independent.** A sync *replaces* a project's
shared sessions and answers with *every* queued command of the project, whoever
queued it. So every check, in every process (xdist workers, or several CI jobs
against one server), shares the same fixed list :func:`fixed_sessions` derived from
the project id; checks only ever act on command ids they queued themselves (found
in sync answers by a unique probe in their ``arguments``); and each check brings the
runs it queued to a terminal state on teardown, so sync answers stay small. The few
checks that must share something else (a longer list, a renamed slug) use sessions
from the equally fixed :func:`extra_sessions`, and checks that read the list accept
those.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

import pytest

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry.client._errors import OsfClientError
from pytest_osfoundry.client._exchange import Exchange, mask_token
from pytest_osfoundry.client._mcp_client import McpClient, parse_sse
from pytest_osfoundry.client._relay_client import RELAY_PREFIX, RelayClient
from pytest_osfoundry.client._transport import HttpxTransport, RecordingTransport
from pytest_osfoundry.conformance._eras import domain_protocol
from pytest_osfoundry.conformance._registry import CheckInfo
from pytest_osfoundry.conformance._target import Target
from pytest_osfoundry.http import Response

__all__ = [
    "RENAMED",
    "CheckFailure",
    "Conformance",
    "Outcome",
    "decode_reply",
    "extra_sessions",
    "fixed_sessions",
    "is_utc_timestamp",
    "overflow_sessions",
    "unshared_session_id",
]

SESSION_NOT_FOUND = "Graph session not found or access removed"

#: What the re-check's rename appends to the rename session's slug.
RENAMED = "-renamed"
_ROLES = ("general", "rename", "spare")
_EXTRA = 97  # fixed + extra = 100, the most one sync may carry (D10)

_OPTION_OF = {
    "agent_token": "--osf-agent-token",
    "other_agent_token": "--osf-other-agent-token",
    "read_token": "--osf-read-token",
    "desktop_token": "--osf-desktop-token",
    "project_id": "--osf-project-id",
    "stranger_token": "--osf-stranger-token",
    "stranger_desktop_token": "--osf-stranger-desktop-token",
    "stranger_project_id": "--osf-stranger-project-id",
}


def _gsid(project_id: str, role: str) -> str:
    digest = hashlib.sha256(f"osf-conformance:{project_id}:{role}".encode()).hexdigest()
    return f"gs_{digest[:32]}"


def _session(project_id: str, role: str, title: str) -> dict[str, Any]:
    return {
        "graph_session_id": _gsid(project_id, role),
        "name": f"Conformance {title}",
        "description": f"Shared by the pytest-osfoundry conformance suite ({role}).",
        "slug": f"osf-conformance-{role}",
        "version": 1,
        "status": "active",
    }


def fixed_sessions(project_id: str) -> list[dict[str, Any]]:
    """The three sessions every check shares, the same in every process.

    ``[0]`` is where checks queue runs; ``[1]`` is renamed by ``D13-slug-changed``
    only; ``[2]`` is spare.
    """
    return [_session(project_id, role, f"{role} session") for role in _ROLES]


def extra_sessions(project_id: str) -> list[dict[str, Any]]:
    """97 more fixed sessions: with :func:`fixed_sessions`, the largest allowed sync."""
    return [_session(project_id, f"extra-{i:02d}", f"extra session {i:02d}") for i in range(_EXTRA)]


def overflow_sessions(project_id: str, count: int) -> list[dict[str, Any]]:
    """``count`` sessions used only in refused syncs (never shared by a correct server)."""
    return [
        _session(project_id, f"overflow-{i:03d}", f"overflow session {i:03d}") for i in range(count)
    ]


def unshared_session_id(project_id: str) -> str:
    """A well-formed Graph session id the suite never shares."""
    return _gsid(project_id, "never-shared")


def is_utc_timestamp(value: object) -> bool:
    """True for an RFC 3339 timestamp in UTC (``Z`` or ``+00:00``)."""
    parsed = parse_rfc3339(value)
    offset = None if parsed is None else parsed.utcoffset()
    return offset is not None and offset.total_seconds() == 0


class CheckFailure(AssertionError):
    """A check found the target differing from SPEC.md; the message says how."""


OutcomeKind = Literal["result", "tool_error", "rpc_error", "http_error", "malformed"]


@dataclass
class Outcome:
    """How the server answered one JSON-RPC request, decoded without judging it.

    * ``result`` — a JSON-RPC result that is not ``isError``; ``structured`` holds
      ``structuredContent`` (or the object in ``content[0].text``).
    * ``tool_error`` — a result with ``isError: true``; ``message`` is ``content[0].text``.
    * ``rpc_error`` — a JSON-RPC error object (2xx); ``code``/``message`` are its own.
    * ``http_error`` — a non-2xx status (``code``/``message`` from a JSON-RPC error
      body when there is one).
    * ``malformed`` — a 2xx reply that is no JSON-RPC answer at all.

    ``raw`` is the JSON-RPC message's exact bytes (the body, or the SSE event's data).
    """

    kind: OutcomeKind
    status: int
    headers: dict[str, str]
    raw: bytes = b""
    result: Any = None
    structured: dict[str, Any] | None = None
    message: str | None = None
    code: int | None = None

    @property
    def refused(self) -> bool:
        """Whether the request was refused in any way a client can tell."""
        return self.kind in ("tool_error", "rpc_error", "http_error")

    def describe(self) -> str:
        """One phrase saying what came back."""
        if self.kind == "result":
            return "a success result"
        if self.kind == "tool_error":
            return f"an isError result {self.message!r}"
        if self.kind == "rpc_error":
            return f"JSON-RPC error {self.code} {self.message!r}"
        if self.kind == "http_error":
            extra = f" (JSON-RPC error {self.code} {self.message!r})" if self.code else ""
            return f"HTTP {self.status}{extra}"
        return f"HTTP {self.status} with no JSON-RPC answer"


def _content_type(headers: Mapping[str, str]) -> str:
    value = ""
    for name, val in headers.items():
        if name.lower() == "content-type":
            value = val
    return value.partition(";")[0].strip().lower()


def decode_reply(reply: Response) -> Outcome:
    """Decode an MCP reply (JSON or an event stream) into an :class:`Outcome`."""
    headers = {k.lower(): v for k, v in reply.headers.items()}
    ctype = _content_type(headers)
    message: Any = None
    raw = b""
    if ctype == "application/json":
        try:
            message = json.loads(reply.body)
            raw = reply.body
        except ValueError:
            message = None
    elif ctype == "text/event-stream":
        for event, data in parse_sse(reply.body.decode("utf-8", "replace")):
            if event != "message":
                continue
            try:
                candidate = json.loads(data)
            except ValueError:
                continue
            if isinstance(candidate, dict) and ("result" in candidate or "error" in candidate):
                message, raw = candidate, data.encode()
                break
    ok = 200 <= reply.status <= 299
    is_rpc = isinstance(message, dict) and ("result" in message or "error" in message)
    code: int | None = None
    text: str | None = None
    if is_rpc and isinstance(message.get("error"), dict):
        err = message["error"]
        code = err.get("code") if isinstance(err.get("code"), int) else None
        text = err.get("message") if isinstance(err.get("message"), str) else None
    if not ok:
        return Outcome("http_error", reply.status, headers, raw, None, None, text, code)
    if not is_rpc:
        return Outcome("malformed", reply.status, headers, raw)
    if "error" in message:
        return Outcome("rpc_error", reply.status, headers, raw, None, None, text, code)
    result = message["result"]
    content = result.get("content") if isinstance(result, dict) else None
    first = content[0] if isinstance(content, list) and content else None
    first_text = first.get("text") if isinstance(first, dict) else None
    if isinstance(result, dict) and result.get("isError") is True:
        return Outcome(
            "tool_error",
            reply.status,
            headers,
            raw,
            result,
            None,
            first_text if isinstance(first_text, str) else None,
        )
    structured = result.get("structuredContent") if isinstance(result, dict) else None
    if not isinstance(structured, dict) and isinstance(first_text, str):
        try:
            parsed = json.loads(first_text)
        except ValueError:
            parsed = None
        structured = parsed if isinstance(parsed, dict) else None
    return Outcome(
        "result",
        reply.status,
        headers,
        raw,
        result,
        structured if isinstance(structured, dict) else None,
    )


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass
class _Tracked:
    client: McpClient
    command_id: str
    execution_id: str | None = None
    done: bool = False


@dataclass(repr=False)
class Conformance:
    """Everything one check needs; made fresh for each check by the ``osf_conf`` fixture."""

    target: Target
    info: CheckInfo
    secrets: Sequence[str] = ()
    recorder: RecordingTransport = field(init=False)
    notes: list[str] = field(default_factory=list, init=False)
    _decisive: Exchange | None = field(default=None, init=False)
    _clients: dict[str, McpClient] = field(default_factory=dict, init=False)
    _relays: dict[str, RelayClient] = field(default_factory=dict, init=False)
    _tracked: dict[str, _Tracked] = field(default_factory=dict, init=False)
    _synced: bool = field(default=False, init=False)
    _probes: int = field(default=0, init=False)
    nonce: str = field(default_factory=lambda: uuid.uuid4().hex[:12], init=False)
    """Random per check: part of every probe and generated key."""

    def __post_init__(self) -> None:
        self.recorder = RecordingTransport(HttpxTransport(self.target.http), keep=40)

    def __repr__(self) -> str:
        return f"Conformance(check={self.info.check_id!r}, target={self.target.label!r})"

    # ------------------------------------------------------------------ credentials
    def need(self, name: str) -> str:
        """The credential ``name`` (a :class:`Credentials` field); skip the check without it."""
        value = getattr(self.target.creds, name)
        if not value:
            flag = _OPTION_OF[name]
            env = flag.lstrip("-").replace("-", "_").upper()
            pytest.skip(f"needs {flag} (or {env})")
        return str(value)

    @property
    def project_id(self) -> str:
        """The project the agents are connected to."""
        return self.need("project_id")

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """The fixed shared sessions of the project (:func:`fixed_sessions`)."""
        return fixed_sessions(self.project_id)

    # ------------------------------------------------------------------ clients
    def mcp(self, token: str | None, protocol: str | None = None) -> McpClient:
        """A new MCP client with ``token`` (``None``: no Authorization header).

        It speaks ``protocol``, by default the domain checks' (``--osf-protocol``).
        """
        if protocol is None:
            protocol = domain_protocol(self.target, self.target.protocol)
        return McpClient(self.recorder, self.target.mcp_url, token, protocol=protocol)

    def _role(self, name: str) -> McpClient:
        """The role's MCP client: one initialized session per role and process, whose
        requests go through this check's recorder while the check runs."""
        client = self._clients.get(name)
        if client is not None:
            return client
        token = None if name == "anonymous" else self.need(name)
        client = self.target.sessions.get(name)
        if client is None:
            client = self.initialized(self.mcp(token))
            self.target.sessions[name] = client
        client.transport = self.recorder
        self._clients[name] = client
        return client

    @property
    def agent(self) -> McpClient:
        """The agent (``--osf-agent-token``)."""
        return self._role("agent_token")

    @property
    def other_agent(self) -> McpClient:
        """Another agent of the same account and project (``--osf-other-agent-token``)."""
        return self._role("other_agent_token")

    @property
    def read_agent(self) -> McpClient:
        """An agent with ``osfoundry:read`` only (``--osf-read-token``)."""
        return self._role("read_token")

    @property
    def stranger(self) -> McpClient:
        """An agent of another account (``--osf-stranger-token``)."""
        return self._role("stranger_token")

    @property
    def anonymous(self) -> McpClient:
        """A client sending no token."""
        return self._role("anonymous")

    def relay(self, token: str | None) -> RelayClient:
        """A relay client with ``token`` at the target's relay URL."""
        return RelayClient(self.recorder, self.target.relay_url, token)

    @property
    def desktop(self) -> RelayClient:
        """The owner's desktop (``--osf-desktop-token``)."""
        if "desktop" not in self._relays:
            self._relays["desktop"] = self.relay(self.need("desktop_token"))
        return self._relays["desktop"]

    @property
    def stranger_desktop(self) -> RelayClient:
        """Another account's desktop (``--osf-stranger-desktop-token``)."""
        if "stranger" not in self._relays:
            self._relays["stranger"] = self.relay(self.need("stranger_desktop_token"))
        return self._relays["stranger"]

    # ------------------------------------------------------------------ raw HTTP
    def http(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> Response:
        """Send one raw request through the recorder; any status is returned."""
        try:
            return self.recorder.request(method, url, dict(headers or {}), body)
        except OsfClientError as err:
            self.fail(f"{method} {url}: {err}")

    def initialized(self, client: McpClient) -> McpClient:
        """``client`` ready to send: its era settled, ``initialize`` run in the legacy era."""
        if not client.ready:
            try:
                client.connect()
            except OsfClientError as err:
                self.fail(f"connecting ({client.protocol}) failed: {err}")
        return client

    def rpc_raw(
        self,
        client: McpClient,
        method: str,
        params: Mapping[str, Any] | None = None,
        rpc_id: int | None = None,
    ) -> Response:
        """POST one JSON-RPC request on ``client``'s session (a fresh id unless given)."""
        self.initialized(client)
        if rpc_id is None:
            rpc_id = self.target.next_rpc_id()
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
        sent = client.envelope(method, params)
        if sent is not None:
            payload["params"] = sent
        name = sent.get("name") if method == "tools/call" and sent else None
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        headers = client.request_headers(method, name if isinstance(name, str) else None)
        return self.http("POST", client.url, headers, body)

    def call(self, client: McpClient, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        """Call ``tool`` as ``client`` and decode the answer, whatever it is."""
        self.initialized(client)
        try:
            reply = client.call_tool_raw(tool, arguments)
        except OsfClientError as err:
            self.fail(f"tools/call {tool}: {err}")
        return decode_reply(reply)

    def ok(
        self, client: McpClient, tool: str, arguments: Mapping[str, Any], what: str
    ) -> dict[str, Any]:
        """Call ``tool`` and return its object, failing the check unless it succeeded."""
        __tracebackhide__ = True
        return self.result_of(self.call(client, tool, arguments), tool, what)

    def result_of(self, out: Outcome, tool: str, what: str) -> dict[str, Any]:
        """The object of a successful answer; fail the check for any other answer."""
        __tracebackhide__ = True
        if out.kind != "result":
            self.fail(f"{what}: {tool} answered {out.describe()}")
        if out.structured is None:
            self.fail(
                f"{what}: {tool} succeeded but its result carries no JSON object "
                "(neither structuredContent nor an object in content[0].text)"
            )
        return out.structured

    def relay_raw(
        self,
        action: str,
        command_id: str | None = None,
        body: Any = None,
        *,
        token: str | Literal["desktop"] | None = "desktop",
        raw_body: bytes | None = None,
    ) -> Response:
        """One raw relay request: ``action`` is ``sync``, ``start``, ``control`` or ``complete``.

        ``token`` defaults to the desktop's; ``None`` sends no Authorization header.
        ``raw_body`` replaces the JSON encoding of ``body`` when given.
        """
        from urllib.parse import quote

        root = self.target.relay_url.rstrip("/") + RELAY_PREFIX
        if action == "sync":
            url, method = f"{root}/sync", "POST"
        else:
            assert command_id is not None
            url = f"{root}/commands/{quote(command_id, safe='')}/{action}"
            method = "GET" if action == "control" else "POST"
        headers = {"Accept": "application/json"}
        bearer = self.need("desktop_token") if token == "desktop" else token
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        payload = b""
        if method == "POST":
            headers["Content-Type"] = "application/json"
            if raw_body is not None:
                payload = raw_body
            else:
                payload = json.dumps(
                    body if body is not None else {}, ensure_ascii=False, separators=(",", ":")
                ).encode()
        return self.http(method, url, headers, payload)

    # ------------------------------------------------------------------ the desktop
    def sync(
        self, sessions: list[dict[str, Any]] | None = None, *, desktop: RelayClient | None = None
    ) -> list[dict[str, Any]]:
        """Sync the project as the desktop (the fixed sessions by default); the commands."""
        __tracebackhide__ = True
        shared = self.sessions if sessions is None else sessions
        try:
            commands = (desktop or self.desktop).sync(self.project_id, shared)
        except OsfClientError as err:
            self.fail(f"the desktop's sync failed: {err}")
        if sessions is None:
            self._synced = True
        return commands

    def start(self, command_id: str) -> str:
        """Start one of the check's commands as the desktop; the status answered."""
        __tracebackhide__ = True
        tracked = self._tracked.get(command_id)
        execution_id = _new_execution_id()
        try:
            status = self.desktop.start(command_id, execution_id)
        except OsfClientError as err:
            self.fail(f"the desktop could not start {command_id}: {err}")
        if tracked is not None and status == "running":
            tracked.execution_id = execution_id
        return status

    def execution_id(self, command_id: str) -> str:
        """The execution id the check started ``command_id`` with (a fresh one if none)."""
        tracked = self._tracked.get(command_id)
        if tracked is not None and tracked.execution_id:
            return tracked.execution_id
        return _new_execution_id()

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Post a completion as the desktop, failing the check unless it is accepted."""
        __tracebackhide__ = True
        try:
            answer = self.desktop.complete(command_id, body)
        except OsfClientError as err:
            self.fail(f"the desktop's completion of {command_id} was refused: {err}")
        self.done(command_id)
        return answer

    def done(self, command_id: str) -> None:
        """Note that the check brought ``command_id`` to a terminal state itself."""
        if command_id in self._tracked:
            self._tracked[command_id].done = True

    # ------------------------------------------------------------------ the agent
    def new_key(self) -> str:
        """A fresh idempotency key (32 characters)."""
        return uuid.uuid4().hex

    def probe(self) -> dict[str, Any]:
        """Fresh ``arguments`` no other run has: how the check finds its commands in a sync."""
        self._probes += 1
        return {"osf_conformance": self.info.check_id, "probe": f"{self.nonce}-{self._probes}"}

    def track(self, client: McpClient, command_id: str) -> None:
        """Remember a run the check queued so that teardown can end it."""
        if command_id not in self._tracked:
            self._tracked[command_id] = _Tracked(client, command_id)

    def queue(
        self,
        *,
        client: McpClient | None = None,
        session: Mapping[str, Any] | None = None,
        key: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a run and return the ticket.

        When the session turns out not to be shared (a fresh server), the fixed
        sessions are synced and the call is made once more.
        """
        __tracebackhide__ = True
        who = client or self.agent
        args = self.run_args(session=session, key=key, arguments=arguments)
        out = self.call(who, "run_graph_session", args)
        if not self._synced and out.refused and out.message == SESSION_NOT_FOUND:
            self.sync()  # the fixed sessions are not shared (yet): share them, retry
            out = self.call(who, "run_graph_session", args)
        ticket = self.result_of(out, "run_graph_session", "queueing a run")
        command_id = ticket.get("command_id")
        if not isinstance(command_id, str) or not command_id:
            self.fail(f"run_graph_session's ticket has no command_id string: {_short(ticket)}")
        self.track(who, command_id)
        return ticket

    def run_args(
        self,
        *,
        session: Mapping[str, Any] | None = None,
        key: Any = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``run_graph_session`` arguments: the first fixed session, a new key and a new
        probe as ``arguments``, unless given (``key`` may be anything, to be refused)."""
        return {
            "graph_session_id": (session or self.sessions[0])["graph_session_id"],
            "idempotency_key": self.new_key() if key is None else key,
            "arguments": dict(arguments) if arguments is not None else self.probe(),
        }

    def call_start(self, client: McpClient, arguments: Mapping[str, Any]) -> Outcome:
        """``run_graph_session`` as ``client``, decoded whatever it is; a run it queued
        is tracked, so teardown ends it even when the check expected a refusal."""
        out = self.call(client, "run_graph_session", arguments)
        if out.kind == "result" and isinstance(out.structured, dict):
            command_id = out.structured.get("command_id")
            if isinstance(command_id, str):
                self.track(client, command_id)
        return out

    def view(self, command_id: str, client: McpClient | None = None) -> dict[str, Any]:
        """``get_graph_run`` of one of the check's runs, by the agent that queued it."""
        __tracebackhide__ = True
        return self.ok(
            client or self.agent,
            "get_graph_run",
            {"command_id": command_id},
            f"reading run {command_id}",
        )

    def commands_with(
        self, commands: Sequence[Mapping[str, Any]], arguments: Mapping[str, Any]
    ) -> list[Mapping[str, Any]]:
        """The commands of a sync answer whose ``arguments`` equal ``arguments``."""
        return [c for c in commands if c.get("arguments") == dict(arguments)]

    def command(
        self, commands: Sequence[Mapping[str, Any]], command_id: str
    ) -> Mapping[str, Any] | None:
        """The command ``command_id`` in a sync answer, if there."""
        for c in commands:
            if c.get("command_id") == command_id:
                return c
        return None

    def expect_nothing_queued(self, arguments: Mapping[str, Any], what: str) -> None:
        """Fail if a sync shows a command with ``arguments`` (the refused call queued one)."""
        __tracebackhide__ = True
        found = self.commands_with(self.sync(), arguments)
        for c in found:
            cid = c.get("command_id")
            if isinstance(cid, str):
                self.track(self.agent, cid)
        self.expect(not found, f"{what}, yet a run was queued: the sync delivers {_short(found)}")

    # ------------------------------------------------------------------ judging
    def mask(self, text: str) -> str:
        """``text`` with every credential masked."""
        return mask_token(text, list(self.secrets) + self.target.creds.secrets())

    def fail(self, message: str) -> NoReturn:
        """Fail the check with ``message`` (masked)."""
        __tracebackhide__ = True
        raise CheckFailure(self.mask(message))

    def expect(self, condition: object, message: str) -> None:
        """Fail the check with ``message`` unless ``condition`` holds."""
        __tracebackhide__ = True
        if not condition:
            self.fail(message)

    def expect_equal(self, actual: Any, expected: Any, what: str) -> None:
        """Fail unless ``actual == expected``, naming ``what`` and both values."""
        __tracebackhide__ = True
        if actual != expected:
            self.fail(f"{what}: expected {_short(expected)}, got {_short(actual)}")

    def expect_error(self, out: Outcome, message: str, what: str) -> None:
        """Fail unless ``out`` is the domain error ``message`` (isError result or JSON-RPC error).

        The R3 shape (``isError``) is checked by its own check; here either form passes,
        and a JSON-RPC error is noted.
        """
        __tracebackhide__ = True
        if out.kind == "tool_error" and out.message == message:
            return
        if out.kind == "rpc_error" and out.message == message:
            self.note("the error came as a JSON-RPC error, not an isError result")
            return
        self.fail(f"{what}: expected the error {message!r}, got {out.describe()}")

    def expect_schema_refusal(self, out: Outcome, what: str) -> None:
        """Fail unless ``out`` refuses a schema violation as R3 allows; note which form."""
        __tracebackhide__ = True
        if out.kind == "tool_error":
            self.note(f"{what}: refused as an isError result")
            return
        if out.kind in ("rpc_error", "http_error") and out.code == -32602:
            via = "" if out.kind == "rpc_error" else f" (HTTP {out.status})"
            self.note(f"{what}: refused as JSON-RPC error -32602{via}")
            return
        self.fail(
            f"{what}: expected an isError result or JSON-RPC error -32602, got {out.describe()}"
        )

    def note(self, text: str) -> None:
        """Add to the one-line message a passing check reports (e.g. which shape it saw)."""
        self.notes.append(text)

    def decisive(self) -> None:
        """Mark the latest exchange as the one a failure's ``curl`` line replays."""
        exchanges = self.recorder.exchanges
        if exchanges:
            self._decisive = exchanges[-1]

    def exchanges(self) -> tuple[list[Exchange], Exchange | None]:
        """The check's recorded exchanges and the decisive one (the latest by default)."""
        history = self.recorder.exchanges
        decisive = self._decisive or (history[-1] if history else None)
        return history, decisive

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        """End every run the check queued and left open (errors ignored)."""
        for tracked in self._tracked.values():
            if tracked.done:
                continue
            try:
                out = self.call(
                    tracked.client, "cancel_graph_run", {"command_id": tracked.command_id}
                )
                status = (out.structured or {}).get("status") if out.kind == "result" else None
                if status in ("completed", "failed", "cancelled"):
                    continue
                self.desktop.complete(
                    tracked.command_id,
                    {"execution_id": self.execution_id(tracked.command_id), "status": "cancelled"},
                )
            except (OsfClientError, AssertionError, pytest.skip.Exception):
                continue  # best effort: a broken target must not turn into teardown errors


def _new_execution_id() -> str:
    """A fresh execution id, recognisably the suite's own."""
    return f"osf-conf-exec-{uuid.uuid4().hex}"
