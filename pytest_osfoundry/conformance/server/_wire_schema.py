"""Every JSON-RPC answer the suite receives, checked against MCP's schema for its method.

:class:`SchemaWatch` sits in each check's transport
(:mod:`~pytest_osfoundry.conformance.server._wire`):
for every request carrying a JSON-RPC method and an id, it reads the answer (JSON, or
the answering message of an event stream) and validates it against the definition of
its method in the revision the request spoke (:func:`family_of`, :func:`definition_of`).
A violation is kept in the target's :class:`SchemaLedger` with the exchange; the
``R1-wire-schema-<family>`` checks (run after the others of their process) fail on any
violation of their family, naming the method, the JSON pointer, the schema path and how
many answers broke it.

The revision of an answer is the request's ``MCP-Protocol-Version`` header; an
``initialize`` (which has none) is judged in the revision the server answered, or else
the one offered. An answer in no bundled revision, or not JSON at all, is not judged
here (the checks of its method judge it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._mcp_schema import (
    SchemaViolation,
    definition_names,
    first_violation,
)
from pytest_osfoundry._wirejson import loads as _fast_loads
from pytest_osfoundry.client import Exchange, ProtocolViolation, Transport, read_answer
from pytest_osfoundry.conformance.expected import LEGACY_REVISIONS, MODERN_REVISION
from pytest_osfoundry.conformance.scheduling._internal import kept_on
from pytest_osfoundry.http import Response

#: The revisions whose schema the suite judges answers by (its own copy of the names).
REVISIONS = (*reversed(LEGACY_REVISIONS), MODERN_REVISION)

__all__ = [
    "FAMILIES",
    "Finding",
    "SchemaLedger",
    "SchemaWatch",
    "answer_of",
    "definition_of",
    "family_of",
    "ledger_of",
    "revision_of",
]

FAMILIES = ("discover", "initialize", "tools-list", "tools-call", "error")
"""The message families a wire-schema check each judges (``error``: any error answer)."""

_METHODS = {
    "server/discover": ("discover", "DiscoverResult"),
    "initialize": ("initialize", "InitializeResult"),
    "tools/list": ("tools-list", "ListToolsResult"),
    "tools/call": ("tools-call", "CallToolResult"),
}
_KEEP = 5


@dataclass(frozen=True)
class Finding:
    """One answer that broke the schema: its method, the violation and the exchange."""

    method: str
    violation: SchemaViolation
    exchange: Exchange

    def describe(self) -> str:
        """``tools/call answer at /result/content/0: 'type' is a required property (...)``."""
        return f"the {self.method} answer {self.violation.describe()}"


@dataclass
class SchemaLedger:
    """What the answers of one target showed, per family (thread-safe)."""

    judged: dict[str, int] = field(default_factory=dict)
    """Answers validated, per family."""
    broken: dict[str, int] = field(default_factory=dict)
    """Answers that broke the schema, per family."""
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    """The first few findings per family."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def note(self, family: str, finding: Finding | None) -> None:
        """One more answer of ``family`` validated; ``finding`` if it broke the schema."""
        with self._lock:
            self.judged[family] = self.judged.get(family, 0) + 1
            if finding is not None:
                self.broken[family] = self.broken.get(family, 0) + 1
                kept = self.findings.setdefault(family, [])
                if len(kept) < _KEEP:
                    kept.append(finding)


def ledger_of(target: object) -> SchemaLedger:
    """The :class:`SchemaLedger` of ``target``, kept on it (made on first use)."""
    return kept_on(target, "_osf_schema_ledger", SchemaLedger, SchemaLedger)


def family_of(method: str, answer: Mapping[str, Any]) -> str | None:
    """The family an answer to ``method`` belongs to (``None``: none judged)."""
    if "error" in answer and "result" not in answer:
        return "error"
    known = _METHODS.get(method)
    return known[0] if known is not None else None


def definition_of(revision: str, method: str, answer: Mapping[str, Any]) -> str | None:
    """The schema definition a whole answer message to ``method`` must match.

    An error answer: the revision's JSON-RPC error response. A result: the method's
    ``...ResultResponse`` where the revision has one (2026-07-28), else ``None`` (the
    envelope and the result are then judged apart, see :func:`judge`).
    """
    names = definition_names(revision)
    if "error" in answer and "result" not in answer:
        return "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in names else "JSONRPCError"
    known = _METHODS.get(method)
    if known is not None and f"{known[1]}Response" in names:
        return f"{known[1]}Response"
    return None


def judge(revision: str, method: str, answer: Mapping[str, Any]) -> SchemaViolation | None:
    """The violation of MCP ``revision``'s schema in ``answer`` to ``method`` (or ``None``)."""
    whole = definition_of(revision, method, answer)
    if whole is not None:
        return first_violation(revision, whole, answer)
    names = definition_names(revision)
    envelope = "JSONRPCResultResponse" if "JSONRPCResultResponse" in names else "JSONRPCResponse"
    found = first_violation(revision, envelope, answer)
    known = _METHODS.get(method)
    if found is not None or known is None:
        return found
    inner = first_violation(revision, known[1], answer.get("result"))
    if inner is None:
        return None
    return SchemaViolation(
        inner.revision,
        inner.definition,
        "/result" + inner.pointer,
        inner.schema_path,
        inner.message,
    )


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def revision_of(
    headers: Mapping[str, str], request: Mapping[str, Any], answer: Mapping[str, Any]
) -> str | None:
    """The revision an answer is judged in (``None``: no bundled one applies)."""
    stated = _header(headers, "mcp-protocol-version")
    if stated in REVISIONS:
        return stated
    if request.get("method") == "initialize":
        result = answer.get("result")
        chosen = result.get("protocolVersion") if isinstance(result, dict) else None
        if chosen in REVISIONS:
            return str(chosen)
        params = request.get("params")
        offered = params.get("protocolVersion") if isinstance(params, dict) else None
        if offered in REVISIONS:
            return str(offered)
    return None


def answer_of(reply: Response, rpc_id: Any) -> dict[str, Any] | None:
    """The JSON-RPC answer in ``reply`` (the JSON body, or the event stream's message
    answering ``rpc_id``: the kit's one reply reader), or ``None`` when it holds none.

    An ``rpc_id`` that is no JSON-RPC id the kit would send (not a string or an integer)
    matches the stream's first response."""
    usable = type(rpc_id) in (int, str)  # true is no id
    try:
        return read_answer(reply, rpc_id if usable else None).message
    except ProtocolViolation:
        return None


class SchemaWatch:
    """A check's transport: forwards, then validates each JSON-RPC answer (never raises
    for what it finds; the wire-schema checks judge the target's ledger)."""

    def __init__(self, inner: Transport, ledger: SchemaLedger) -> None:
        self.inner = inner
        self.ledger = ledger

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Forward; validate the answer when the request was a JSON-RPC call."""
        reply = self.inner.request(method, url, headers, body)
        if method == "POST" and b'"method"' in body and b'"id"' in body:
            self._judge(url, headers, body, reply)
        return reply

    def _judge(self, url: str, headers: Mapping[str, str], body: bytes, reply: Response) -> None:
        try:
            request = _fast_loads(body, json.loads)
        except ValueError:
            return
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return
        if "id" not in request:
            return
        answer = answer_of(reply, request["id"])
        if answer is None or ("jsonrpc" not in answer and "id" not in answer):
            return  # not a JSON-RPC message (an OAuth error body, say): judged elsewhere
        rpc_method = request["method"]
        family = family_of(rpc_method, answer)
        if family == "error" and answer.get("id", 0) is None:
            # JSON-RPC 2.0 (section 5) answers an error whose request id could not be
            # determined with "id": null, and the official SDKs do so before parsing
            # (a Host or Origin guard, a missing session); MCP's schema types the id as a
            # RequestId only. The kit follows JSON-RPC here (docs/choices.md): the null id
            # is judged as the request's id, the rest of the answer by the schema.
            answer = {**answer, "id": request["id"]}
        revision = revision_of(headers, request, answer)
        if family is None or revision is None:
            return
        violation = judge(revision, rpc_method, answer)
        finding = None
        if violation is not None:
            exchange = Exchange(
                "POST", url, dict(headers), body, reply.status, dict(reply.headers), reply.body
            )
            finding = Finding(rpc_method, violation, exchange)
        self.ledger.note(family, finding)
