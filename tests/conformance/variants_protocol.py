"""Reference servers for the MCP transport checks (R1), built by wrapping the HTTP app.

Broken variants (:data:`PROTOCOL_VARIANTS`) each break one transport rule and must
fail exactly their ``fails``; legal variants (:data:`LEGAL_VARIANTS`) speak a subset
of the revisions, or answer in another legal shape, and must pass every check they
are not skipped from (``skips``: the other era's checks, with a reason).
``--osf-target=embedded:tests.conformance.variants_protocol:NAME`` runs the suite
against one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry.http import HandlerWrapper, Request, Response, json_response
from pytest_osfoundry.server import ReferenceServer

__all__ = ["LEGAL_VARIANTS", "PROTOCOL_VARIANTS", "ProtocolVariant", "Wrapped"]

MODERN = "2026-07-28"
LEGACY_CHECKS = frozenset(
    {
        "R1-initialize",
        "R1-notification-202",
        "R1-ping",
        "R1-bad-protocol-version",
        "R1-2025-11-25-initialize",
        "R1-2025-06-18-initialize",
        "R1-wire-schema-initialize",
        "R1-session-bound-to-agent",
    }
)
MODERN_CHECKS = frozenset(
    {
        "R1-2026-07-28-discover",
        "R1-2026-07-28-meta-required",
        "R1-2026-07-28-unsupported-version",
        "R1-2026-07-28-mcp-method-header",
        "R1-2026-07-28-mcp-name-header",
        "R1-2026-07-28-result-type",
        "R1-2026-07-28-caching-hints",
        "R1-2026-07-28-get-405",
        "R1-wire-schema-discover",
    }
)

OnRequest = Callable[[Request], "Request | Response"]
OnResponse = Callable[[Request, Response], Response]


class Wrapped(HandlerWrapper[ReferenceServer]):
    """The reference app behind a request and a response rewriter (a ``Handler``).

    A door's ``serve_at`` reaches the app (:class:`HandlerWrapper`); everything else
    (``provision``, ``mcp_path``, ``state``) is the wrapped app's.
    """

    def __init__(
        self,
        app: ReferenceServer,
        on_request: OnRequest | None = None,
        on_response: OnResponse | None = None,
    ) -> None:
        super().__init__(app)
        self.app = app
        self.on_request = on_request
        self.on_response = on_response

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("inner", "app"):
            raise AttributeError(name)
        return getattr(self.app, name)

    def __call__(self, request: Request, /) -> Response:
        if self.on_request is not None:
            changed = self.on_request(request)
            if isinstance(changed, Response):
                return changed
            request = changed
        response = self.app(request)
        if self.on_response is not None:
            response = self.on_response(request, response)
        return response


@dataclass(frozen=True)
class ProtocolVariant:
    """A variant: its factory, what it is, the checks that must fail and be skipped."""

    name: str
    breaks: str
    fails: frozenset[str]
    skips: frozenset[str]
    factory: Callable[[], Any]


PROTOCOL_VARIANTS: dict[str, ProtocolVariant] = {}
LEGAL_VARIANTS: dict[str, ProtocolVariant] = {}


def _register(
    registry: dict[str, ProtocolVariant],
    breaks: str,
    fails: Iterable[str] = (),
    skips: Iterable[str] = (),
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def register(factory: Callable[[], Any]) -> Callable[[], Any]:
        name = factory.__name__
        registry[name] = ProtocolVariant(name, breaks, frozenset(fails), frozenset(skips), factory)
        return factory

    return register


def _message(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _with_headers(request: Request, **headers: str) -> Request:
    merged = dict(request.headers)
    merged.update({k.lower(): v for k, v in headers.items()})
    return request._replace(headers=merged)


def _rewrite_json(response: Response, change: Callable[[Any], Any]) -> Response:
    """``response`` with its JSON-RPC message (plain JSON or one SSE event) changed."""
    body = response.body
    if response.headers.get("content-type") == "text/event-stream":
        prefix, _, rest = body.partition(b"data: ")
        data, _, tail = rest.partition(b"\n")
        message = _message(data)
        if message is None:
            return response
        encoded = json.dumps(change(message)).encode()
        return Response(
            response.status, dict(response.headers), prefix + b"data: " + encoded + b"\n" + tail
        )
    message = _message(body)
    if message is None:
        return response
    return Response(response.status, dict(response.headers), json.dumps(change(message)).encode())


def _is_modern(request: Request) -> bool:
    return request.headers.get("mcp-protocol-version", "").strip() == MODERN


# ---------------------------------------------------------------------- broken
@_register(
    PROTOCOL_VARIANTS,
    "A modern tools/call without Mcp-Name is accepted (R1: missing → 400 -32020).",
    ["R1-2026-07-28-mcp-name-header"],
)
def mcp_name_not_required() -> Wrapped:
    def fill_in(request: Request) -> Request:
        message = _message(request.body)
        if (
            _is_modern(request)
            and isinstance(message, dict)
            and message.get("method") == "tools/call"
            and "mcp-name" not in request.headers
        ):
            name = (message.get("params") or {}).get("name")
            return _with_headers(request, **{"mcp-name": str(name)})
        return request

    return Wrapped(ReferenceServer(), on_request=fill_in)


@_register(
    PROTOCOL_VARIANTS,
    'Modern results lack resultType (R1: every result carries resultType "complete").',
    [
        "R1-2026-07-28-result-type",
        "R1-wire-schema-discover",  # resultType is required by MCP's schema too
        "R1-wire-schema-tools-list",
        "R1-wire-schema-tools-call",
    ],
)
def no_result_type() -> Wrapped:
    def drop(request: Request, response: Response) -> Response:
        if not _is_modern(request):
            return response

        def change(message: Any) -> Any:
            if isinstance(message, dict) and isinstance(message.get("result"), dict):
                message["result"].pop("resultType", None)
            return message

        return _rewrite_json(response, change)

    return Wrapped(ReferenceServer(), on_response=drop)


@_register(
    PROTOCOL_VARIANTS,
    "An unsupported version gets -32600 instead of -32022 (R1: UnsupportedProtocolVersion).",
    ["R1-2026-07-28-unsupported-version"],
)
def unsupported_version_as_invalid_request() -> Wrapped:
    def recode(request: Request, response: Response) -> Response:
        def change(message: Any) -> Any:
            error = message.get("error") if isinstance(message, dict) else None
            if isinstance(error, dict) and error.get("code") == -32022:
                error["code"] = -32600
                error.pop("data", None)
            return message

        return _rewrite_json(response, change)

    return Wrapped(ReferenceServer(), on_response=recode)


@_register(
    PROTOCOL_VARIANTS,
    "server/discover is an unknown method (R1: a modern server MUST answer it).",
    ["R1-2026-07-28-discover"],
)
def no_discover() -> Wrapped:
    def refuse(request: Request) -> Request | Response:
        message = _message(request.body)
        if isinstance(message, dict) and message.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found: server/discover"}
            return json_response(404, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})
        return request

    return Wrapped(ReferenceServer(), on_request=refuse)


@_register(
    PROTOCOL_VARIANTS,
    "A foreign Origin is served (R1: a present, not-allowed Origin gets 403).",
    ["R1-origin"],
)
def foreign_origin_served() -> Wrapped:
    def forget_origin(request: Request) -> Request:
        if "origin" not in request.headers:
            return request
        return request._replace(headers={k: v for k, v in request.headers.items() if k != "origin"})

    return Wrapped(ReferenceServer(), on_request=forget_origin)


@_register(
    PROTOCOL_VARIANTS,
    "The resource metadata echoes the request's Host (R1: the server's public URL only).",
    ["R1-public-url"],
)
def host_echoed_in_metadata() -> Wrapped:
    app = ReferenceServer()

    def echo(request: Request, response: Response) -> Response:
        if request.path != "/.well-known/oauth-protected-resource" or response.status != 200:
            return response
        host = request.headers.get("host", "127.0.0.1")
        meta = json.loads(response.body)
        meta["resource"] = f"http://{host}{app.mcp_path}"
        meta["authorization_servers"] = [f"http://{host}"]
        return json_response(200, meta)

    return Wrapped(app, on_response=echo)


@_register(
    PROTOCOL_VARIANTS,
    "server/discover lists 2025-06-18, which initialize refuses (R1: a legacy revision "
    "discover lists is served).",
    ["R1-eras-consistent", "R1-2025-06-18-initialize"],
)
def discover_lists_an_unserved_revision() -> Wrapped:
    def claim(request: Request, response: Response) -> Response:
        def change(message: Any) -> Any:
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict) and isinstance(result.get("supportedVersions"), list):
                result["supportedVersions"] = [*result["supportedVersions"], "2025-06-18"]
            return message

        return _rewrite_json(response, change) if _is_modern(request) else response

    return Wrapped(ReferenceServer(protocols=[MODERN, "2025-11-25"]), on_response=claim)


@_register(
    PROTOCOL_VARIANTS,
    "A modern request without _meta is served (R1: missing _meta → 400 -32602).",
    ["R1-2026-07-28-meta-required"],
)
def meta_not_required() -> Wrapped:
    def fill_in(request: Request) -> Request:
        message = _message(request.body)
        params = message.get("params") if isinstance(message, dict) else None
        if _is_modern(request) and isinstance(params, dict) and "_meta" not in params:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            return request._replace(body=json.dumps(message).encode())
        return request

    return Wrapped(ReferenceServer(), on_request=fill_in)


@_register(
    PROTOCOL_VARIANTS,
    "Mcp-Method is not compared with the body (R1: missing or mismatched → 400 -32020).",
    ["R1-2026-07-28-mcp-method-header"],
)
def mcp_method_not_checked() -> Wrapped:
    def overwrite(request: Request) -> Request:
        message = _message(request.body)
        if _is_modern(request) and isinstance(message, dict):
            return _with_headers(request, **{"mcp-method": str(message.get("method"))})
        return request

    return Wrapped(ReferenceServer(), on_request=overwrite)


@_register(
    PROTOCOL_VARIANTS,
    "tools/list has no caching hints (R1: ttlMs and cacheScope on tools/list).",
    [
        "R1-2026-07-28-caching-hints",
        "R1-wire-schema-discover",  # cacheScope is required by MCP's schema too
        "R1-wire-schema-tools-list",
    ],
)
def no_caching_hints() -> Wrapped:
    def strip(request: Request, response: Response) -> Response:
        def change(message: Any) -> Any:
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict):
                result.pop("ttlMs", None)
                result.pop("cacheScope", None)
            return message

        return _rewrite_json(response, change)

    return Wrapped(ReferenceServer(), on_response=strip)


@_register(
    PROTOCOL_VARIANTS,
    "Serves only 2026-07-28, yet a GET on the MCP endpoint opens an (empty) stream "
    "(R1: GET → 405 in 2026-07-28).",
    ["R1-2026-07-28-get-405"],
    skips=LEGACY_CHECKS,
)
def get_answered() -> Wrapped:
    return Wrapped(ReferenceServer(protocols=[MODERN]), on_request=_get_stream)


@_register(
    PROTOCOL_VARIANTS,
    "Dual-era, and a GET on the MCP endpoint gets a JSON 200 (neither 405 nor a stream).",
    ["R1-2026-07-28-get-405"],
)
def get_answered_json() -> Wrapped:
    def json_get(request: Request) -> Request | Response:
        if _is_mcp_get(request):
            return Response(200, {"content-type": "application/json"}, b"{}")
        return request

    return Wrapped(ReferenceServer(), on_request=json_get)


def _is_mcp_get(request: Request) -> bool:
    return request.method == "GET" and request.path.rstrip("/").endswith("/mcp")


def _get_stream(request: Request) -> Request | Response:
    """Answer a GET on the MCP endpoint with an event stream (empty: it ends at once)."""
    if _is_mcp_get(request):
        return Response(200, {"content-type": "text/event-stream"}, b": open\n\n")
    return request


@_register(
    PROTOCOL_VARIANTS,
    "initialize always answers 2025-11-25, even when 2025-06-18 is offered (R1: the "
    "offered revision is negotiated when served).",
    ["R1-2025-06-18-initialize", "R1-eras-consistent"],
)
def initialize_ignores_the_offer() -> Wrapped:
    def force(request: Request) -> Request:
        message = _message(request.body)
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "initialize":
            params["protocolVersion"] = "2025-11-25"
            return request._replace(body=json.dumps(message).encode())
        return request

    return Wrapped(ReferenceServer(), on_request=force)


@_register(
    PROTOCOL_VARIANTS,
    "Legacy sessions are not bound to their agent, the reference server before issue "
    "39: a DELETE without a token ends an agent's session, and another agent's "
    "request with it is served as that agent (R1: a session is no credential).",
    ["R1-session-bound-to-agent"],
)
def sessions_not_bound() -> Wrapped:
    opened: dict[str, str | None] = {}  # session id -> the Authorization that opened it
    lock = threading.Lock()

    def unbind(request: Request) -> Request:
        session = request.headers.get("mcp-session-id")
        with lock:
            if session is None or session not in opened:
                return request
            opener = opened[session]
            if request.method == "DELETE":  # ended, whoever asks: as its opener
                del opened[session]
                headers = {k: v for k, v in request.headers.items() if k != "authorization"}
                if opener is not None:
                    headers["authorization"] = opener
                return request._replace(headers=headers)
        if request.headers.get("authorization") != opener:  # served as the caller
            headers = {k: v for k, v in request.headers.items() if k != "mcp-session-id"}
            return request._replace(headers=headers)
        return request

    def note(request: Request, response: Response) -> Response:
        session = response.headers.get("mcp-session-id")
        if session is not None:
            with lock:
                opened[session] = request.headers.get("authorization")
        return response

    return Wrapped(ReferenceServer(), on_request=unbind, on_response=note)


# ---------------------------------------------------------------------- legal
@_register(LEGAL_VARIANTS, "Serves only 2026-07-28.", skips=LEGACY_CHECKS)
def modern_only() -> ReferenceServer:
    return ReferenceServer(protocols=[MODERN])


@_register(LEGAL_VARIANTS, "Serves only the legacy revisions.", skips=MODERN_CHECKS)
def legacy_only() -> ReferenceServer:
    return ReferenceServer(protocols=["2025-11-25", "2025-06-18"])


@_register(
    LEGAL_VARIANTS,
    "Serves only 2025-06-18.",
    skips=MODERN_CHECKS | {"R1-2025-11-25-initialize"},
)
def only_2025_06_18() -> ReferenceServer:
    return ReferenceServer(protocols=["2025-06-18"])


@_register(LEGAL_VARIANTS, "Answers every request as an event stream, modern era included.")
def sse_on_every_era() -> ReferenceServer:
    return ReferenceServer(sse=True)


#: Line ends in turn, so every form the SSE format allows meets every kind of line.
_LINE_ENDS = ("\r\n", "\n", "\r")


def frame_every_form(message: bytes, event_id: int) -> bytes:
    """One JSON-RPC ``message`` as an event stream written in every form the SSE format
    allows (WHATWG): a byte order mark, comments, a priming event (an id and empty
    data, as MCP 2025-11-25 says a server SHOULD send first), ``retry``, unknown
    fields, a field with no colon, the JSON spread over several ``data`` lines with
    and without the space after the colon, CR, LF and CRLF line ends in turn, and an
    unterminated event after the answer (what a stream left open looks like so far).

    The answer's event data is the same for the same message (only the priming id
    varies), so answers a check compares byte for byte stay comparable.
    """
    pretty = json.dumps(json.loads(message), indent=1, ensure_ascii=False).split("\n")
    lines = [": stream opened", f"id: {event_id}", "data:", ""]  # the priming event
    lines += ["retry: 3000", ": keep-alive", "x-vendor: ignored", "event: message"]
    for index, part in enumerate(pretty):
        lines.append(("data:" if index % 2 else "data: ") + part)
        if index == 1:
            lines.append("data")  # no colon: the field "data" with an empty value
    lines += ["", ": after the answer", 'data: {"jsonrpc": "2.0", "method": "notifications/']
    text = "".join(line + _LINE_ENDS[n % 3] for n, line in enumerate(lines))
    return ("\ufeff" + text).encode()


@_register(
    LEGAL_VARIANTS,
    "Answers every request as an event stream in every form the SSE format allows (priming "
    "event, multi-line data, data:x, CR/LF/CRLF, comments, an unterminated event after it).",
)
def sse_every_form() -> Wrapped:
    count = iter(range(1, 1 << 62))

    def reframe(request: Request, response: Response) -> Response:
        if response.headers.get("content-type") != "text/event-stream":
            return response
        _, _, rest = response.body.partition(b"data: ")
        body = frame_every_form(rest.partition(b"\n")[0], next(count))
        return Response(response.status, dict(response.headers), body)

    return Wrapped(ReferenceServer(sse=True), on_response=reframe)


@_register(LEGAL_VARIANTS, "Adds its own keys to every modern result's _meta.")
def extra_meta_keys() -> Wrapped:
    def add(request: Request, response: Response) -> Response:
        def change(message: Any) -> Any:
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict):
                meta = result.setdefault("_meta", {})
                meta["com.example/trace"] = {"span": "0af7651916cd43dd"}
            return message

        return _rewrite_json(response, change) if _is_modern(request) else response

    return Wrapped(ReferenceServer(), on_response=add)


@_register(
    LEGAL_VARIANTS,
    "Issues no Mcp-Session-Id at initialize (MCP: a server may; every request is served "
    "without one), so no session can be bound.",
    skips={"R1-session-bound-to-agent"},
)
def legacy_without_sessions() -> Wrapped:
    def drop(request: Request, response: Response) -> Response:
        if "mcp-session-id" not in response.headers:
            return response
        headers = {k: v for k, v in response.headers.items() if k != "mcp-session-id"}
        return Response(response.status, headers, response.body)

    return Wrapped(ReferenceServer(), on_response=drop)


@_register(LEGAL_VARIANTS, "Dual-era, and keeps the legacy revisions' GET stream.")
def dual_era_get_stream() -> Wrapped:
    return Wrapped(ReferenceServer(), on_request=_get_stream)
