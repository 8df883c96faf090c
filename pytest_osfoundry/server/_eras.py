"""MCP protocol revisions and the modern era's request rules (SPEC R1).

Three revisions exist: ``2025-06-18`` and ``2025-11-25`` (the *legacy* era, with an
``initialize`` handshake) and ``2026-07-28`` (the *modern*, stateless era). This
module names them, validates a ``protocols`` setting, decides which era a request
belongs to, and checks a modern request's envelope: the ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers against the body, and the per-request
``params._meta``. Each check answers ``None`` (fine) or an :class:`EnvelopeError`
carrying the HTTP status, the JSON-RPC code, the message and optional ``data``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._mcp_vocabulary import (
    ALL_VERSIONS,
    HEADER_MISMATCH,
    INVALID_PARAMS,
    LEGACY_VERSIONS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_VERSION,
    MODERN_VERSIONS,
    PROTOCOL_VERSION_HEADER,
    UNSUPPORTED_VERSION,
)

__all__ = [
    "ALL_VERSIONS",
    "HEADER_MISMATCH",
    "LEGACY_VERSIONS",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_SERVER_INFO",
    "META_VERSION",
    "MODERN_VERSIONS",
    "UNSUPPORTED_VERSION",
    "EnvelopeError",
    "check_modern",
    "decode_header_value",
    "is_modern_request",
    "normalize_protocols",
]


# Request headers arrive with lower-case names (pytest_osfoundry.http.Request).
_METHOD_KEY = MCP_METHOD_HEADER.lower()
_NAME_KEY = MCP_NAME_HEADER.lower()
_VERSION_KEY = PROTOCOL_VERSION_HEADER.lower()

_SENTINEL_START = "=?base64?"
_SENTINEL_END = "?="


@dataclass(frozen=True)
class EnvelopeError:
    """Why a modern request's envelope is refused: HTTP status, JSON-RPC code, text."""

    status: int
    code: int
    message: str
    data: Mapping[str, Any] | None = None


def normalize_protocols(protocols: Iterable[str] | None) -> tuple[str, ...]:
    """The revisions to serve, newest first; ``None`` means all of them.

    Raises:
        ValueError: empty, or naming a revision the kit does not know.
    """
    if protocols is None:
        return ALL_VERSIONS
    if isinstance(protocols, str):
        protocols = [protocols]
    chosen = list(protocols)
    unknown = [p for p in chosen if p not in ALL_VERSIONS]
    if unknown:
        raise ValueError(
            f"unknown MCP protocol revision {unknown[0]!r}; known: {', '.join(ALL_VERSIONS)}"
        )
    if not chosen:
        raise ValueError("protocols must name at least one revision")
    return tuple(v for v in ALL_VERSIONS if v in chosen)


def is_modern_request(method: str, params: Any, header_version: str | None) -> bool:
    """Whether a request asks for the modern era.

    It does when its ``params._meta`` names a protocol version other than a legacy
    revision; without one, when its ``MCP-Protocol-Version`` header names a modern
    revision, or when it is ``server/discover`` (only the modern era has it). Anything
    else (no version, a legacy one, an unknown one without ``_meta``) is legacy.
    """
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and META_VERSION in meta:
        return meta[META_VERSION] not in LEGACY_VERSIONS
    if header_version is not None and header_version.strip() in MODERN_VERSIONS:
        return True
    return method == "server/discover"


#: A header value's allowed characters: visible ASCII, space and tab.
_VISIBLE = re.compile(r"[\t\x20-\x7e]*")


def decode_header_value(raw: str) -> str | None:
    """A header value with surrounding whitespace trimmed and a Base64 sentinel decoded.

    ``None`` when the value is malformed: characters outside visible ASCII, space and
    tab, or a ``=?base64?...?=`` value that is not valid Base64 of UTF-8 text.
    """
    if _VISIBLE.fullmatch(raw) is None:
        return None
    value = raw.strip(" \t")
    if (
        value.startswith(_SENTINEL_START)
        and value.endswith(_SENTINEL_END)
        and len(value) >= len(_SENTINEL_START) + len(_SENTINEL_END)
    ):
        encoded = value[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return None
    return value


def _mismatch(message: str) -> EnvelopeError:
    return EnvelopeError(400, HEADER_MISMATCH, f"Header mismatch: {message}")


def _check_headers(headers: Mapping[str, str], method: str, params: Any) -> EnvelopeError | None:
    raw_method = headers.get(_METHOD_KEY)
    if raw_method is None:
        return _mismatch("the Mcp-Method header is required")
    sent = decode_header_value(raw_method)
    if sent is None:
        return _mismatch("the Mcp-Method header is malformed")
    if sent != method:
        return _mismatch(f"Mcp-Method header value {sent!r} does not match body method {method!r}")
    if method == "tools/call":
        raw_name = headers.get(_NAME_KEY)
        if raw_name is None:
            return _mismatch("the Mcp-Name header is required for tools/call")
        name = decode_header_value(raw_name)
        if name is None:
            return _mismatch("the Mcp-Name header is malformed")
        body_name = params.get("name") if isinstance(params, dict) else None
        if name != body_name:
            return _mismatch(
                f"Mcp-Name header value {name!r} does not match body value {body_name!r}"
            )
    return None


def check_modern(
    headers: Mapping[str, str], method: str, params: Any, served: tuple[str, ...]
) -> EnvelopeError | None:
    """Check a modern request's headers and ``_meta`` (``served``: every revision served).

    In order: ``Mcp-Method``/``Mcp-Name`` against the body (``-32020``); ``_meta`` with
    a protocol version and client capabilities (``-32602``); ``MCP-Protocol-Version``
    present and equal to ``_meta``'s version (``-32020``: a mismatch is judged before
    support); the version served (``-32022`` with ``data.supported`` and
    ``data.requested``). Every refusal is HTTP 400.
    """
    bad = _check_headers(headers, method, params)
    if bad is not None:
        return bad
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is not dict:
        return EnvelopeError(
            400, INVALID_PARAMS, "Invalid params: params._meta is required (MCP 2026-07-28)"
        )
    version = meta.get(META_VERSION)
    if not isinstance(version, str) or not version:
        return EnvelopeError(400, INVALID_PARAMS, f"Invalid params: _meta lacks {META_VERSION}")
    if not isinstance(meta.get(META_CAPABILITIES), dict):
        return EnvelopeError(
            400, INVALID_PARAMS, f"Invalid params: _meta lacks {META_CAPABILITIES}"
        )
    raw_version = headers.get(_VERSION_KEY)
    if raw_version is None:
        return _mismatch("the MCP-Protocol-Version header is required")
    header_version = decode_header_value(raw_version)
    if header_version != version:
        return _mismatch(
            f"MCP-Protocol-Version header value {header_version!r} does not match "
            f"_meta protocol version {version!r}"
        )
    if version not in served:
        return EnvelopeError(
            400,
            UNSUPPORTED_VERSION,
            f"Unsupported protocol version {version!r}",
            {"supported": list(served), "requested": version},
        )
    return None
