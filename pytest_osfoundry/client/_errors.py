"""The exceptions the client side raises, all under :class:`OsfClientError`.

Each class names one way an exchange can go wrong, so a caller (a conformance
check, the fake relay, a simulation) can tell "no reply came back" from "the
server said no" from "the server said something the protocol does not allow".

Promise: no message built here contains a credential. The clients that raise
these exceptions mask tokens before they hand any text over, and the classes
themselves never put headers (where tokens travel) into a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ConnectionLost",
    "DeadlineExceeded",
    "HttpStatusError",
    "JsonRpcError",
    "OsfClientError",
    "ProtocolViolation",
    "ReplyLost",
    "ResponseTooLarge",
    "ToolError",
]

_BODY_SNIPPET = 200


class OsfClientError(Exception):
    """Base class of every error the client side raises on purpose."""


class ReplyLost(OsfClientError):
    """No reply came back: connection refused or reset, timeout, dropped reply.

    The request may or may not have reached the server; a caller that must not
    act twice retries with the same idempotency key (SPEC D7). ``url`` is the
    target with any token-like query values masked, or ``None`` when unknown.
    """

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


class DeadlineExceeded(ReplyLost):
    """The exchange did not end within its deadline (connect, headers and body in all).

    The message says what the server did: sent nothing, dripped its body, or kept
    an event stream open without the answer.
    """


class ResponseTooLarge(ReplyLost):
    """The response was larger than the size cap; reading stopped at the cap."""


class ConnectionLost(ReplyLost):
    """The connection was refused or reset before any answer (no status line came back).

    Raised for a refused or failed connect, and for a connection the server closed,
    reset or answered with malformed HTTP while the request was sent or its headers
    awaited; a failure after the headers arrived (while the body was read) is a plain
    :class:`ReplyLost`. Usual causes: the server is down, or its listen backlog or
    worker pool overflowed.
    """


class HttpStatusError(OsfClientError):
    """The server answered with a non-2xx HTTP status.

    ``status``, ``headers`` (lower-case names) and the raw ``body`` are kept as
    received; the message shows the status, the (masked) URL and the start of the
    body, never the headers. ``body_text`` should be the body already masked by the
    raiser; when omitted, the body is decoded as-is.
    """

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        *,
        url: str | None = None,
        body_text: str | None = None,
    ) -> None:
        self.status = status
        self.headers: dict[str, str] = {k.lower(): v for k, v in headers.items()}
        self.body = body
        self.url = url
        text = body.decode("utf-8", "replace") if body_text is None else body_text
        text = " ".join(text.split())
        if len(text) > _BODY_SNIPPET:
            text = text[:_BODY_SNIPPET] + "..."
        where = f" from {url}" if url else ""
        message = f"HTTP {status}{where}"
        if text:
            message += f": {text}"
        super().__init__(message)

    @property
    def www_authenticate(self) -> str | None:
        """The ``WWW-Authenticate`` challenge the server sent, or ``None``."""
        return self.headers.get("www-authenticate")

    def json(self) -> Any:
        """The body decoded as JSON (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.body)


class JsonRpcError(OsfClientError):
    """A JSON-RPC 2.0 error object came back instead of a result.

    ``code`` is the integer error code (for example ``-32601`` for an unknown
    method), ``message`` the server's message, ``data`` its optional extra value.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class ToolError(OsfClientError):
    """A ``tools/call`` result came back with ``isError: true``.

    ``message`` is the tool's message (``content[0].text``, SPEC R3), for example
    ``Graph run not found or access removed``; ``result`` is the whole result object.
    """

    def __init__(self, message: str, result: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.result: dict[str, Any] = dict(result) if result is not None else {}


class ProtocolViolation(OsfClientError):
    """The server answered something the protocol does not allow.

    Examples: a body that is not JSON, a JSON-RPC response with the wrong id, an
    event stream that ends without the response, an unsupported protocol version.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
