"""Which browser origins may call the server (SPEC R1, MCP transport security).

A request whose ``Origin`` header is present and not allowed gets 403 before
anything else happens (DNS rebinding protection); a request without ``Origin`` —
every non-browser client — is served. ``Origin`` names one origin: a value holding
several (a comma or a blank inside, as when a door joins repeated fields) is refused
whatever they are. Allowed: loopback origins (``localhost``,
``127.0.0.1``, ``[::1]``, any port, http or https), the server's own public origin,
and the origins the operator adds.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from pytest_osfoundry._origin import origin_of

__all__ = ["OriginPolicy"]

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class OriginPolicy:
    """The allowed origins: loopback, the server's own, and ``extra``.

    ``extra`` entries must be origins (``https://app.example``); a malformed one is a
    :class:`ValueError` naming it.
    """

    def __init__(self, extra: Iterable[str] = ()) -> None:
        if isinstance(extra, str):
            extra = [extra]
        self.extra = frozenset(origin_of(o) for o in extra)

    def allows(self, sent: str, own_origin: str) -> bool:
        """Whether a request with ``Origin: sent`` may be served by a server at ``own_origin``."""
        if any(c == "," or c.isspace() for c in sent.strip(" \t")):
            return False  # several origins: whichever one a browser meant, not one to trust
        try:
            origin = origin_of(sent)
        except ValueError:
            return False  # "null", garbage: not an origin this server knows
        if urlsplit(origin).hostname in _LOOPBACK_HOSTS:
            return True
        return origin == own_origin or origin in self.extra
