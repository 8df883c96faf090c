"""One recorded HTTP exchange, and its printed forms (curl, a report's record, text).

Promise: nothing here prints a credential unless the caller passes ``mask=False``.
Masked is the default of every rendering (:meth:`Exchange.to_curl`,
:meth:`Exchange.to_dict`, :meth:`Exchange.format`, ``repr`` and ``str``); what masking
hides is :mod:`pytest_osfoundry._masking`'s to say.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._masking import mask_headers, mask_token, mask_url, secrets_in

__all__ = ["BODY_LIMIT", "Exchange"]

BODY_LIMIT = 4000
"""Characters of a body kept by :meth:`Exchange.to_dict` and :meth:`Exchange.format`."""

_SKIP_IN_CURL = frozenset({"content-length", "host"})


def _body_text(body: bytes, secrets: list[str], mask: bool, limit: int | None) -> str:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return f"<{len(body)} bytes, not UTF-8>"
    if mask:
        text = mask_token(text, secrets)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... [truncated: {len(text)} characters in all]"
    return text


@dataclass(repr=False)
class Exchange:
    """One request and what came back, as a transport saw it.

    ``status`` is ``0`` and ``error`` says why when no reply came back (the
    transport raised :class:`~pytest_osfoundry.client._errors.ReplyLost`).
    ``elapsed`` is in seconds. Header names are as the caller / server gave them.
    """

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    elapsed: float = 0.0
    error: str | None = None

    def secrets(self) -> list[str]:
        """The secret strings this exchange carries (what masking hides)."""
        return secrets_in(self.url, self.request_headers) + secrets_in("", self.response_headers)

    def _parts(
        self, mask: bool
    ) -> tuple[str, dict[str, str], dict[str, str], list[str], str | None]:
        if not mask:
            return self.url, dict(self.request_headers), dict(self.response_headers), [], self.error
        secrets = self.secrets()
        error = mask_token(self.error, secrets) if self.error is not None else None
        return (
            mask_url(self.url, secrets),
            mask_headers(self.request_headers, secrets),
            mask_headers(self.response_headers, secrets),
            secrets,
            error,
        )

    def to_curl(self, mask: bool = True) -> str:
        """A ready-to-run ``curl`` command line that repeats the request.

        Every part is quoted with :func:`shlex.quote`. With ``mask`` (the default)
        the bearer token reads ``***``: paste the real one in to run it. The body
        is sent verbatim with ``--data-binary`` (``--data-raw`` when it starts with
        ``@``, which curl would read as a file name).
        """
        url, req_headers, _, secrets, _ = self._parts(mask)
        args = ["curl", "-sS", "-X", self.method, url]
        for name, value in req_headers.items():
            if name.lower() not in _SKIP_IN_CURL:
                args += ["-H", f"{name}: {value}"]
        if self.request_body:
            text = self.request_body.decode("utf-8", "backslashreplace")
            if mask:
                text = mask_token(text, secrets)
            args += ["--data-raw" if text.startswith("@") else "--data-binary", text]
        return " ".join(shlex.quote(arg) for arg in args)

    def to_dict(self, mask: bool = True) -> dict[str, Any]:
        """A JSON-ready record of the exchange, for reports.

        Bodies are text when UTF-8 (else a ``<N bytes, not UTF-8>`` marker), cut at
        :data:`BODY_LIMIT` characters with a ``[truncated: ...]`` marker.
        ``response`` is ``None`` when no reply came back.
        """
        url, req_headers, resp_headers, secrets, error = self._parts(mask)
        response: dict[str, Any] | None = None
        if self.status:
            response = {
                "status": self.status,
                "headers": resp_headers,
                "body": _body_text(self.response_body, secrets, mask, BODY_LIMIT),
            }
        return {
            "method": self.method,
            "url": url,
            "elapsed": self.elapsed,
            "request": {
                "headers": req_headers,
                "body": _body_text(self.request_body, secrets, mask, BODY_LIMIT),
            },
            "response": response,
            "error": error,
        }

    def format(self, mask: bool = True) -> str:
        """Human-readable text of the request and the response (bodies truncated)."""
        url, req_headers, resp_headers, secrets, error = self._parts(mask)
        lines = [f"{self.method} {url}"]
        lines += [f"{name}: {value}" for name, value in req_headers.items()]
        if self.request_body:
            lines += ["", _body_text(self.request_body, secrets, mask, BODY_LIMIT)]
        lines.append("")
        millis = self.elapsed * 1000.0
        if not self.status:
            lines.append(f"<- no reply ({millis:.1f} ms): {error}")
            return "\n".join(lines)
        lines.append(f"<- {self.status} ({millis:.1f} ms)")
        lines += [f"{name}: {value}" for name, value in resp_headers.items()]
        if self.response_body:
            lines += ["", _body_text(self.response_body, secrets, mask, BODY_LIMIT)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        url = mask_url(self.url, self.secrets())
        outcome = f"status={self.status}" if self.status else "no reply"
        return f"Exchange({self.method} {url!r}, {outcome}, elapsed={self.elapsed:.4f})"
