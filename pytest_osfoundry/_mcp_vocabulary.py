"""MCP's words, defined once for the kit: revisions, JSON-RPC codes, headers, ``_meta`` keys.

The server, the clients and the world take these from here (the domain's own words
are in :mod:`pytest_osfoundry._vocabulary`, which re-exports the revisions). The
conformance suite does *not* import this module: what it asserts it keeps in its own
copy, :mod:`pytest_osfoundry.conformance.expected`, so that a wrong value here
cannot make the suite agree with a wrong server (``tests/conformance/test_suite_imports.py``
keeps it so).

Sources: the MCP revisions 2025-06-18, 2025-11-25 (an ``initialize`` handshake and
a session header) and 2026-07-28 (stateless: the envelope is in ``_meta`` and in the
``Mcp-Method`` / ``Mcp-Name`` headers, SEP-2243); JSON-RPC 2.0 for the standard codes.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALL_VERSIONS",
    "HEADER_MISMATCH",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_VERSIONS",
    "MCP_METHOD_HEADER",
    "MCP_NAME_HEADER",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_SERVER_INFO",
    "META_VERSION",
    "METHOD_NOT_FOUND",
    "MISSING_CAPABILITY",
    "MODERN_ONLY_CODES",
    "MODERN_VERSION",
    "MODERN_VERSIONS",
    "PARSE_ERROR",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "UNAUTHORIZED",
    "UNSUPPORTED_VERSION",
]

# ---------------------------------------------------------------------- revisions (R1)
#: The modern MCP revisions (stateless, no ``initialize``).
MODERN_VERSIONS: Final = ("2026-07-28",)
#: The modern revision the kit speaks.
MODERN_VERSION: Final = MODERN_VERSIONS[0]
#: The legacy MCP revisions (an ``initialize`` handshake), newest first.
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18")
#: Every MCP revision the kit speaks, newest first.
ALL_VERSIONS: Final = MODERN_VERSIONS + LEGACY_VERSIONS

# ---------------------------------------------------------------------- JSON-RPC codes
#: JSON-RPC 2.0: the body is not JSON.
PARSE_ERROR: Final = -32700
#: JSON-RPC 2.0: the body is JSON but no valid request.
INVALID_REQUEST: Final = -32600
#: JSON-RPC 2.0: no such method (in the modern revision: with HTTP 404).
METHOD_NOT_FOUND: Final = -32601
#: JSON-RPC 2.0: bad parameters (MCP: an unknown tool; modern: a request without ``_meta``).
INVALID_PARAMS: Final = -32602
#: The kit's code for a refused credential (401/403 with a ``WWW-Authenticate`` challenge).
UNAUTHORIZED: Final = -32001
#: 2026-07-28 HeaderMismatch: ``Mcp-Method``/``Mcp-Name``/the version header against the body.
HEADER_MISMATCH: Final = -32020
#: 2026-07-28 MissingRequiredClientCapability.
MISSING_CAPABILITY: Final = -32021
#: 2026-07-28 UnsupportedProtocolVersion (``data.supported``, ``data.requested``).
UNSUPPORTED_VERSION: Final = -32022
#: The codes only a modern server sends.
MODERN_ONLY_CODES: Final = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

# ---------------------------------------------------------------------- HTTP headers
#: The revision a request speaks (every revision after ``initialize``; modern: always).
PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
#: The legacy revisions' session, set by ``initialize``'s answer.
SESSION_ID_HEADER: Final = "Mcp-Session-Id"
#: 2026-07-28: the JSON-RPC method, repeated as a header.
MCP_METHOD_HEADER: Final = "Mcp-Method"
#: 2026-07-28: the tool (``tools/call``) or other name the request is about.
MCP_NAME_HEADER: Final = "Mcp-Name"

# ---------------------------------------------------------------------- _meta keys
#: 2026-07-28: the revision of a request, in ``params._meta``.
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
#: 2026-07-28: the client's capabilities, in ``params._meta``.
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
#: 2026-07-28: the client's name and version, in ``params._meta``.
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
#: 2026-07-28: the server's name and version, in a result's ``_meta``.
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
