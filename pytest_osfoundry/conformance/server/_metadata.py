"""Where a target's protected-resource metadata is, found as MCP clients find it (SPEC R2).

RFC 9728 §3.1 puts the document at the path-inserted well-known URI
(``/.well-known/oauth-protected-resource/mcp`` for an endpoint at ``/mcp``); the root
form is common too, and either is conformant. :func:`metadata_urls` lists where to
look, in the order a client looks: the URL a 401 challenge's ``resource_metadata``
names (when it is on the target's origin), else the path-inserted form, then the
root. :func:`fetch_metadata` asks each in turn and returns the first document
served.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from pytest_osfoundry.conformance.expected import WELL_KNOWN
from pytest_osfoundry.conformance.server._challenge import challenge_params
from pytest_osfoundry.conformance.server._target import Target, origin_of
from pytest_osfoundry.conformance.server._wire import Wire
from pytest_osfoundry.http import Response

__all__ = ["fetch_metadata", "metadata_urls", "path_inserted"]


def path_inserted(mcp_url: str) -> str:
    """RFC 9728 §3.1's metadata URI for ``mcp_url``: the well-known path inserted
    between the origin and the endpoint's path (the root form for an endpoint at ``/``)."""
    path = urlsplit(mcp_url).path.rstrip("/")
    return origin_of(mcp_url) + WELL_KNOWN + path


def metadata_urls(target: Target, challenge: str | None) -> list[str]:
    """Where to look for the metadata, first to last.

    ``challenge`` is a ``WWW-Authenticate`` value (or ``None``): its
    ``resource_metadata``, when on the target's origin, is the only place looked
    (the server said where it is); otherwise the path-inserted form, then the root.
    """
    named = (challenge_params(challenge) or {}).get("resource_metadata", "")
    if named and origin_of(named, None) == target.origin:
        return [named]
    forms = [path_inserted(target.mcp_url), target.origin + WELL_KNOWN]
    return list(dict.fromkeys(forms))


def fetch_metadata(
    wire: Wire, target: Target, challenge: str | None, headers: Mapping[str, str] | None = None
) -> tuple[str, Response]:
    """GET each of :func:`metadata_urls` until one answers 2xx; that URL and its reply
    (the last one tried, whatever it answered, when none did). ``headers`` are sent
    besides ``Accept: application/json``."""
    sent = {"Accept": "application/json", **(headers or {})}
    urls = metadata_urls(target, challenge)
    reply: Response | None = None
    for url in urls:
        reply = wire.http("GET", url, sent)
        if 200 <= reply.status < 300:
            return url, reply
    assert reply is not None  # metadata_urls is never empty
    return urls[-1], reply
