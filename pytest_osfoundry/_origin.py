"""The origin of a URL (RFC 6454), defined once for the whole kit.

The reference server's ``Origin`` policy and public URL, the client's era cache (one
era per server) and the conformance suite's target and metadata URLs all compare
origins; they all take them from :func:`origin_of`, so two spellings of one server
(``HTTP://Example.COM:80`` and ``http://example.com``) are one origin everywhere.
"""

from __future__ import annotations

from typing import TypeVar, overload
from urllib.parse import urlsplit

__all__ = ["origin_of"]

_T = TypeVar("_T")
_RAISE: object = object()


@overload
def origin_of(url: str) -> str: ...


@overload
def origin_of(url: str, default: _T) -> str | _T: ...


def origin_of(url: str, default: object = _RAISE) -> object:
    """The origin of an absolute http(s) URL: ``scheme://host[:port]``, scheme and host
    lower-cased, an IPv6 host in brackets, the scheme's default port and any user
    information dropped.

    ``default`` is returned for anything else (a value a server sent, say); without
    it, anything else is a :class:`ValueError` naming the value.
    """
    try:
        if not isinstance(url, str):
            raise ValueError(f"expected an http(s) URL, got {url!r}")
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as err:
            raise ValueError(f"not a valid URL: {url!r} ({err})") from None
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if scheme not in ("http", "https") or not host:
            raise ValueError(f"expected an absolute http(s) URL, got {url!r}")
    except ValueError:
        if default is _RAISE:
            raise
        return default
    shown = f"[{host}]" if ":" in host else host
    standard = 80 if scheme == "http" else 443
    return f"{scheme}://{shown}" + ("" if port in (None, standard) else f":{port}")
