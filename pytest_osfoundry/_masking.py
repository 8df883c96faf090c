"""Secret masking: the one place that decides what of a request is a secret, and hides it.

Every printed form of an exchange (:class:`~pytest_osfoundry.client.Exchange`), the
server's and the loopback door's messages, the relay's logs and the suite's reports
go through it. Promise: a masked text shows no secret it was told of or found. Masking
hides:

* the credentials of ``Authorization`` / ``Proxy-Authorization`` (the scheme word
  stays: ``Bearer ***``), and the whole value of cookie and API-key headers;
* the values of token-like query parameters (``access_token``, ``token``,
  ``api_key``, anything ending in ``token`` or ``secret``, ...);
* the user information of URLs (``https://***@host``);
* every other occurrence of those secret strings anywhere in the URL, the headers
  or the bodies: raw, percent-encoded, JSON-escaped (``\\u`` escapes included), quoted
  as Python's ``repr`` quotes it (a message that shows a value) or base64-encoded
  (standard or URL-safe alphabet, at any alignment inside a longer base64 text, as
  in a ``Basic`` credential or an encoded JSON document).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from urllib.parse import quote, quote_plus, unquote_plus

__all__ = [
    "MASK",
    "MIN_SECRET",
    "mask_cut_end",
    "mask_headers",
    "mask_token",
    "mask_url",
    "mask_url_credentials",
    "secrets_in",
]

MASK = "***"
"""What a masked secret is replaced with."""

MIN_SECRET = 4
"""Shortest secret :func:`mask_token` replaces wherever it appears."""

_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization"})
_SECRET_HEADERS = frozenset(
    {"cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token", "x-access-token"}
)
_SECRET_PARAMS = frozenset(
    {
        "access_token",
        "token",
        "id_token",
        "refresh_token",
        "api_key",
        "apikey",
        "key",
        "secret",
        "client_secret",
        "password",
        "auth",
        "code",
        "sig",
        "signature",
    }
)
def _is_secret_param(name: str) -> bool:
    low = unquote_plus(name).lower()
    return (
        low in _SECRET_PARAMS
        or low.endswith(("token", "secret"))
        or "password" in low
        or "api_key" in low
    )


def _is_secret_header(name: str) -> bool:
    low = name.lower()
    return low in _SECRET_HEADERS or "token" in low or "secret" in low or "api-key" in low


def _credential(value: str) -> str:
    """The secret part of an ``Authorization`` value: what follows the scheme word."""
    parts = value.strip().split(None, 1)
    if len(parts) == 2:
        return parts[1].strip()
    return value.strip()


def _query_pairs(url: str) -> tuple[str, str, str]:
    """Split ``url`` into (before ``?``, query, ``#fragment`` with its ``#``)."""
    head, hash_, fragment = url.partition("#")
    base, _, query = head.partition("?")
    return base, query, hash_ + fragment


def secrets_in(url: str = "", headers: Mapping[str, str] | None = None) -> list[str]:
    """Every secret string found in ``url``'s query and in ``headers``.

    Secrets are the credentials of ``Authorization``-like headers, the whole value of
    cookie and API-key headers, and the values of token-like query parameters (both
    as written and percent-decoded). Feed the result to :func:`mask_token`.
    """
    found: list[str] = []
    for name, value in (headers or {}).items():
        low = name.lower()
        if low in _CREDENTIAL_HEADERS:
            found.append(_credential(value))
        elif _is_secret_header(low):
            found.append(value.strip())
    if "?" in url:
        _, query, _ = _query_pairs(url)
        for pair in query.split("&"):
            name, eq, value = pair.partition("=")
            if eq and value and _is_secret_param(name):
                found.append(value)
                found.append(unquote_plus(value))
    for userinfo in _USERINFO.findall(url):
        user, colon, password = userinfo[1].partition(":")
        secret = password if colon else user
        found += [secret, unquote_plus(secret)]
    return [s for s in found if s and s != MASK]


#: ``scheme://userinfo@``: the user information of a URL anywhere in a text.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#@\s'\"]+)@")


def mask_url_credentials(text: str) -> str:
    """``text`` with the user information of every URL in it masked (``http://***@host``)."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)


def _base64_forms(secret: bytes) -> set[str]:
    """What ``secret`` looks like inside any base64 text, at each of the 3 alignments.

    The secret encoded on its own (with and without padding), and, for each
    alignment inside a longer text, the characters that depend on its bytes alone
    (the first and last groups mix in the neighbouring bytes), in both the standard
    and the URL-safe alphabet. Forms shorter than 6 characters are left out: too
    short to be a credential's trace.
    """
    whole_standard = base64.b64encode(secret).decode("ascii")
    whole_urlsafe = base64.urlsafe_b64encode(secret).decode("ascii")
    forms = {whole_standard, whole_standard.rstrip("="), whole_urlsafe, whole_urlsafe.rstrip("=")}
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + secret).decode("ascii").rstrip("=")
        start = 4 if lead else 0
        whole = (lead + len(secret)) // 3 * 4  # characters of complete groups
        middle = encoded[start:whole]
        if len(middle) >= 6:
            forms.add(middle)
            forms.add(middle.replace("+", "-").replace("/", "_"))
    return forms


@lru_cache(maxsize=64)
def _forms(secret: str) -> tuple[str, ...]:
    """Every form of ``secret`` the masker replaces, longest first.

    Cached: the conformance plugin masks every report section with the run's same few
    tokens (hundreds of calls a run), and working out one token's forms each time
    would show in a run against ``embedded``. It holds only secrets
    the caller asked to mask, never text that came off the wire.
    """
    forms = {
        secret,
        repr(secret)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        "".join(f"\\u{ord(ch):04x}" for ch in secret),
        "".join(f"\\u{ord(ch):04X}" for ch in secret),
    }
    forms |= _base64_forms(secret.encode("utf-8"))
    return tuple(sorted(forms, key=len, reverse=True))


def mask_token(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``.

    Each secret is also looked for percent-encoded, JSON-escaped and base64-encoded
    (see the module docstring), and longer secrets are replaced first. ``None`` and
    secrets shorter than :data:`MIN_SECRET` characters are ignored: they are too short
    to be credentials, and replacing them everywhere would shred the text (where they
    stand as a header or query value, :func:`mask_headers` and :func:`mask_url` still
    hide them).
    """
    unique = {s for s in secrets if s and len(s) >= MIN_SECRET}
    if not unique:
        return text
    out = text
    for secret in sorted(unique, key=len, reverse=True):
        for form in _forms(secret):
            if form in out:
                out = out.replace(form, MASK)
    return out


def mask_cut_end(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with the start of a secret it ends with masked (at least
    :data:`MIN_SECRET` characters of it): what was read of an output while its writer
    was still writing the secret, or was killed writing it."""
    for secret in secrets:
        if not secret:
            continue
        for size in range(len(secret) - 1, MIN_SECRET - 1, -1):
            if text.endswith(secret[:size]):
                return text[:-size] + MASK
    return text


def mask_url(url: str, secrets: Iterable[str | None] = ()) -> str:
    """``url`` with its user information, token-like query values and the given secrets
    masked."""
    extra: list[str | None] = list(secrets)
    if "@" in url:
        extra += secrets_in(url)
        url = mask_url_credentials(url)
    if "?" in url:
        base, query, fragment = _query_pairs(url)
        pairs = []
        for pair in query.split("&"):
            name, eq, value = pair.partition("=")
            if eq and value and _is_secret_param(name):
                extra.append(value)
                extra.append(unquote_plus(value))
                pairs.append(f"{name}={MASK}")
            else:
                pairs.append(pair)
        url = f"{base}?{'&'.join(pairs)}{fragment}"
    return mask_token(url, extra)


def mask_headers(headers: Mapping[str, str], secrets: Iterable[str | None] = ()) -> dict[str, str]:
    """A copy of ``headers`` with credentials masked (``Authorization: Bearer ***``).

    Credential headers keep their scheme word; cookie and API-key headers become
    ``***``; any other value has the given secrets masked.
    """
    extra = list(secrets)
    out: dict[str, str] = {}
    for name, value in headers.items():
        low = name.lower()
        if low in _CREDENTIAL_HEADERS:
            parts = value.strip().split(None, 1)
            out[name] = f"{parts[0]} {MASK}" if len(parts) == 2 else MASK
        elif _is_secret_header(low):
            out[name] = MASK
        else:
            out[name] = mask_token(value, extra)
    return out
