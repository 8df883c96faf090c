"""Bearer tokens and the OAuth resource-server answers (SPEC R2, R12).

A :class:`TokenStore` maps opaque bearer tokens to who holds them: an agent (with
scopes) or an account's desktop relay. It never prints a token: ``repr`` of a
:class:`Credential` masks it, and :meth:`TokenStore.mask` is the one way the server
hides every token it knows in a text it is about to show (a log line, an error that
quotes what a request sent).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Credential",
    "TokenStore",
    "bearer_token",
    "challenge",
    "has_query_token",
    "resource_metadata_url",
]

Kind = Literal["agent", "desktop"]


@dataclass(frozen=True)
class Credential:
    """What a bearer token stands for. ``principal_id`` is an agent or account id."""

    token: str = field(repr=False)
    kind: Kind
    principal_id: str
    expires_at: float | None = None

    def __repr__(self) -> str:
        return f"Credential(kind={self.kind!r}, principal_id={self.principal_id!r}, token=***)"


class TokenStore:
    """Issued tokens. ``lookup`` returns ``None`` for unknown or expired ones."""

    def __init__(self) -> None:
        self._tokens: dict[str, Credential] = {}
        self._issued: list[str] = []  # every token ever issued (revoked too) or hidden: mask()
        self._lock = threading.Lock()

    def issue(
        self,
        kind: Kind,
        principal_id: str,
        token: str | None = None,
        expires_at: float | None = None,
    ) -> str:
        """Register a token (random, URL-safe, 32 bytes unless given) and return it."""
        if kind not in ("agent", "desktop"):
            raise ValueError(f"kind must be 'agent' or 'desktop', got {kind!r}")
        token = token if token is not None else f"osf_{secrets.token_urlsafe(32)}"
        if not token or any(c.isspace() for c in token) or not token.isprintable():
            raise ValueError("a token must be non-empty printable text without spaces")
        with self._lock:
            if token in self._tokens:
                raise ValueError("that token is issued already")
            self._tokens[token] = Credential(token, kind, principal_id, expires_at)
            self._issued.append(token)
        return token

    def hide(self, secret: str) -> None:
        """Mask ``secret`` too, wherever :meth:`mask` masks an issued token: a credential
        the server was given but never issued (``serve``'s admin token). It opens
        nothing here."""
        if not isinstance(secret, str) or not secret:
            raise ValueError("a secret to hide must be a non-empty string")
        with self._lock:
            self._issued.append(secret)

    def revoke(self, token: str) -> None:
        """Forget a token (later requests with it are refused as unknown)."""
        with self._lock:
            self._tokens.pop(token, None)

    def mask(self, text: str, headers: Mapping[str, str] | None = None) -> str:
        """``text`` with every token this store ever issued (revoked ones too) and every
        credential ``headers`` carry (a request's ``Authorization``, known or not)
        replaced by ``***``, in each form :func:`~pytest_osfoundry._masking.mask_token`
        knows (raw, ``repr``-quoted, JSON-escaped, percent- and base64-encoded).

        Everything the server echoes of a request goes through it first. (The masking
        module is imported here: it comes with the client package, which a server that
        echoes nothing never needs.)
        """
        from pytest_osfoundry._masking import mask_token, secrets_in

        with self._lock:
            known = list(self._issued)
        if headers:
            known += secrets_in("", headers)
        return mask_token(text, known)

    def lookup(self, token: str | None, now: float) -> Credential | None:
        """The credential for ``token``, or ``None`` if unknown, missing or expired."""
        if not token:
            return None
        cred = self._tokens.get(token)
        if cred is None or (cred.expires_at is not None and now >= cred.expires_at):
            return None
        return cred


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; ``None`` if absent or malformed.

    Nothing is cached: no raw ``Authorization`` header outlives the request it came with.
    """
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


def has_query_token(query: str) -> bool:
    """True when the query string carries an ``access_token`` (never accepted, R2)."""
    if not query:
        return False
    return any(part.split("=", 1)[0] == "access_token" for part in query.split("&"))


def resource_metadata_url(origin: str) -> str:
    """Where the protected-resource metadata lives for a server at ``origin``."""
    return f"{origin.rstrip('/')}/.well-known/oauth-protected-resource"


def challenge(origin: str, scope: str, error: str | None = None) -> str:
    """A ``WWW-Authenticate`` value: ``Bearer`` with ``resource_metadata`` and ``scope``.

    ``error`` is ``invalid_token`` for a bad token, ``insufficient_scope`` for a token
    without the scope, or ``None`` when no token was sent (RFC 6750 §3.1).
    """
    parts = []
    if error is not None:
        parts.append(f'error="{error}"')
    parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{resource_metadata_url(origin)}"')
    return "Bearer " + ", ".join(parts)
