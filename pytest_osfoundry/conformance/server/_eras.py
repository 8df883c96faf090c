"""Which MCP revisions a target serves, and which one the domain checks speak (SPEC R1).

:func:`served_revisions` finds the revisions once per target and process: the modern
one through ``server/discover`` (or a modern ``tools/list``), the legacy ones through
``initialize`` offering each legacy revision. A legacy revision is served when
``initialize`` accepts it or ``server/discover`` lists it: MCP asks discover to name
the revisions for *modern* requests, so a dual-era server need not list the legacy
ones (``docs/choices.md``). Every probe carries the agent token when one is given: a
server may ask for one on everything but D3's open methods, and goes through the
target's liveness watch (:mod:`~pytest_osfoundry.conformance.server._liveness`): against a
silent target the probes cost one deadline and one liveness probe, not one each.
:func:`domain_protocol` settles ``--osf-protocol``: a pinned revision is used as
given; ``auto`` is settled the way a dual-era client does (a modern probe first,
``initialize`` when the target answers as a legacy server would).
:func:`need_revision` skips a check, with a reason, when the target does not serve
the revision it is about.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from pytest_osfoundry.client import McpClient, OsfClientError
from pytest_osfoundry.client._internal import ACCEPT, request_body
from pytest_osfoundry.conformance.expected import (
    LEGACY_REVISIONS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    MODERN_REVISION,
    PROTOCOL_VERSION_HEADER,
)
from pytest_osfoundry.conformance.server._liveness import no_answer_unless_gone, watch
from pytest_osfoundry.conformance.server._target import Target
from pytest_osfoundry.conformance.server._wire_schema import answer_of

__all__ = [
    "MODERN",
    "NOT_SERVED",
    "Revisions",
    "describe_protocol",
    "domain_protocol",
    "legacy_headers",
    "modern_body",
    "modern_headers",
    "need_legacy",
    "need_revision",
    "rpc_body",
    "served_revisions",
    "settled_revision",
]

MODERN = MODERN_REVISION
CLIENT_NAME = "pytest-osfoundry"
"""The ``clientInfo.name`` of the suite's own modern requests."""
NOT_SERVED = "not applicable: "
"""How the skip reason of a check about a revision the target does not serve begins:
such a check does not apply, so even ``--osf-strict`` does not count it as a failure."""
_V = TypeVar("_V")
_lock = threading.Lock()
# id(target) -> (a weak reference to that target, what was found): an id can be
# reused once a target is gone, so a hit counts only while the reference is alive.
_found: dict[int, tuple[weakref.ref[Target], Revisions]] = {}
_settled: dict[int, tuple[weakref.ref[Target], str]] = {}


def _cached(cache: dict[int, tuple[weakref.ref[Target], _V]], target: Target) -> _V | None:
    with _lock:
        entry = cache.get(id(target))
    return entry[1] if entry is not None and entry[0]() is target else None


def _remember(cache: dict[int, tuple[weakref.ref[Target], _V]], target: Target, value: _V) -> None:
    with _lock:
        cache[id(target)] = (weakref.ref(target), value)


@dataclass(frozen=True)
class Revisions:
    """What a target serves: the revisions, how they were found, and what discover said."""

    served: tuple[str, ...]
    discover: dict[str, Any] | None
    initialize_answers: dict[str, str | None]
    """Legacy revision offered → the revision ``initialize`` answered (``None``: refused)."""

    @property
    def modern(self) -> bool:
        return MODERN in self.served

    @property
    def legacy(self) -> tuple[str, ...]:
        return tuple(v for v in self.served if v in LEGACY_REVISIONS)


def legacy_headers(**extra: str) -> dict[str, str]:
    """The headers of a well-formed request outside a session, as a legacy client sends
    ``initialize`` (``extra`` added or replacing)."""
    return {"Content-Type": "application/json", "Accept": ACCEPT, **extra}


def rpc_body(
    rpc_id: int | str | None, method: str, params: Mapping[str, Any] | None = None
) -> bytes:
    """A JSON-RPC request body as the kit writes every one (compact UTF-8 JSON; no
    ``params`` when ``None``; ``rpc_id`` ``None``: a notification)."""
    return request_body(method, params, rpc_id)


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers of a well-formed modern request (``extra`` added or replacing)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        PROTOCOL_VERSION_HEADER: MODERN,
        MCP_METHOD_HEADER: method,
    }
    if name is not None:
        headers[MCP_NAME_HEADER] = name
    headers.update(extra)
    return headers


def modern_body(
    rpc_id: int, method: str, params: dict[str, Any] | None = None, meta: Any = ...
) -> bytes:
    """A modern JSON-RPC request body; ``meta`` replaces the well-formed ``_meta``
    (``None``: no ``_meta`` at all)."""
    body = dict(params or {})
    if meta is ...:
        meta = {
            META_VERSION: MODERN,
            META_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": CLIENT_NAME, "version": "1"},
        }
    if meta is not None:
        body["_meta"] = meta
    return rpc_body(rpc_id, method, body)


def _post(target: Target, headers: dict[str, str], body: bytes, rpc_id: int) -> tuple[int, Any]:
    """POST one probe (with the agent token when one is given); the status and the
    JSON-RPC answer to ``rpc_id`` (JSON or event stream, read by the kit's one reply
    reader; ``None`` when the reply holds none)."""
    token = target.creds.agent_token
    if token:
        headers = {**headers, "Authorization": f"Bearer {token}"}
    reply = watch(target, target.transport).request("POST", target.mcp_url, headers, body)
    return reply.status, answer_of(reply, rpc_id)


def _find(target: Target) -> Revisions:
    discover: dict[str, Any] | None = None
    rid = target.next_rpc_id()
    try:
        status, message = _post(
            target, modern_headers("server/discover"), modern_body(rid, "server/discover"), rid
        )
    except OsfClientError as err:
        no_answer_unless_gone(target, err)
        status, message = 0, None
    result = message.get("result") if isinstance(message, dict) else None
    if 200 <= status < 300 and isinstance(result, dict):
        discover = result
    modern = discover is not None or _modern_list_works(target)
    answers: dict[str, str | None] = {}
    for offered in LEGACY_REVISIONS:
        rid = target.next_rpc_id()
        init = {
            "protocolVersion": offered,
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": "1"},
        }
        headers = legacy_headers()
        try:
            status, message = _post(target, headers, request_body("initialize", init, rid), rid)
        except OsfClientError as err:
            no_answer_unless_gone(target, err)
            status, message = 0, None
        got = message.get("result") if isinstance(message, dict) else None
        version = got.get("protocolVersion") if isinstance(got, dict) else None
        answers[offered] = version if 200 <= status < 300 and isinstance(version, str) else None
    listed = discover.get("supportedVersions") if discover is not None else None
    names = listed if isinstance(listed, list) else []
    served = [MODERN] if modern else []
    served += [v for v, answered in answers.items() if answered == v or v in names]
    return Revisions(tuple(served), discover, answers)


def _modern_list_works(target: Target) -> bool:
    """Whether a modern ``tools/list`` gets a modern result (one with ``resultType``): a
    modern server without ``server/discover``, not a legacy one ignoring the envelope."""
    rid = target.next_rpc_id()
    try:
        status, message = _post(
            target, modern_headers("tools/list"), modern_body(rid, "tools/list"), rid
        )
    except OsfClientError as err:
        no_answer_unless_gone(target, err)
        return False
    result = message.get("result") if isinstance(message, dict) else None
    return 200 <= status < 300 and isinstance(result, dict) and "resultType" in result


def served_revisions(target: Target) -> Revisions:
    """The revisions ``target`` serves (found once per target and process)."""
    found = _cached(_found, target)
    if found is None:
        found = _find(target)
        _remember(_found, target, found)
    return found


def domain_protocol(target: Target, choice: str) -> str:
    """The revision the domain checks speak: ``choice``, or ``auto`` settled once."""
    if choice != "auto":
        return choice
    settled = _cached(_settled, target)
    if settled is None:
        transport = watch(target, target.transport)
        client = McpClient(transport, target.mcp_url, target.creds.agent_token, era_cache={})
        try:
            era = client.connect()
        except OsfClientError as err:
            no_answer_unless_gone(target, err)
            era = "modern"  # neither era answered: the checks will say what went wrong
        newest_legacy = LEGACY_REVISIONS[0]
        settled = MODERN if era == "modern" else str(client.negotiated_version or newest_legacy)
        _remember(_settled, target, settled)
    return settled


def need_revision(target: Target, revision: str) -> Revisions:
    """Skip the current check unless ``target`` serves ``revision``."""
    found = served_revisions(target)
    if revision not in found.served:
        pytest.skip(
            f"{NOT_SERVED}the target does not serve MCP {revision} (it serves "
            f"{', '.join(found.served) or 'no revision the suite knows'})"
        )
    return found


def need_legacy(target: Target) -> Revisions:
    """Skip the current check unless ``target`` serves a legacy revision."""
    found = served_revisions(target)
    if not found.legacy:
        pytest.skip(
            f"{NOT_SERVED}the target serves no legacy MCP revision (2025-11-25, 2025-06-18): "
            f"it serves {', '.join(found.served) or 'none the suite knows'}"
        )
    return found


def settled_revision(target: Target) -> str | None:
    """The revision ``--osf-protocol auto`` settled on for ``target``, or ``None`` if no
    check has asked yet (read it while the target is alive: the cache is weak)."""
    return _cached(_settled, target)


def describe_protocol(choice: str, settled: Iterable[str] = ()) -> str:
    """``--osf-protocol`` for the reports: the pinned revision, or ``auto → <revision>``.

    ``settled`` is what ``auto`` settled on in the run (in this process, and in each
    xdist worker for the controller, which runs no check); ``auto`` alone when none
    was settled (no check ran).
    """
    if choice != "auto":
        return choice
    revisions = sorted(set(settled))
    return f"auto → {', '.join(revisions)}" if revisions else "auto"
