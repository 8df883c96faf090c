"""The origin of a URL, defined once (``_origin.origin_of``) for the server, the client
and the suite."""

from __future__ import annotations

import pytest

from pytest_osfoundry._origin import origin_of
from pytest_osfoundry.client import EraCache
from pytest_osfoundry.server import ReferenceServer


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://user:pw@Osf.Example:8443/a/mcp?x=1", "https://osf.example:8443"),
        ("HTTP://Example.COM:80/mcp", "http://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("http://[::1]:8080/mcp", "http://[::1]:8080"),
        (" http://127.0.0.1:9/ ", "http://127.0.0.1:9"),
    ],
)
def test_an_origin_is_written_one_way(url: str, origin: str) -> None:
    assert origin_of(url) == origin
    assert origin_of(url, None) == origin


@pytest.mark.parametrize(
    "url", ["null", "urn:osf", "ftp://x/y", "http://", "http://h:port/", "http://[::1/", "/mcp"]
)
def test_what_is_no_http_url_is_refused_or_the_default(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        origin_of(url)
    assert origin_of(url, None) is None


def test_the_era_cache_keeps_one_era_per_origin_however_written() -> None:
    cache = EraCache()
    cache.remember("HTTP://Example.com:80/mcp", "legacy")
    assert cache.get("http://example.com/other") == "legacy"
    assert cache.mapping == {"http://example.com": "legacy"}
    cache.remember("mcp-over-pipes", "modern")  # no http(s) URL: its own key
    assert cache.get("mcp-over-pipes") == "modern"


def test_the_server_names_its_origin_as_everyone_else_does() -> None:
    server = ReferenceServer(public_url="https://A.example:443/x/mcp")
    assert server.origin() == origin_of("https://a.example/x") == "https://a.example"
