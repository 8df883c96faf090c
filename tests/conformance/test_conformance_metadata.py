"""Where the suite looks for the protected-resource metadata (SPEC R2, RFC 9728 §3.1)."""

from __future__ import annotations

import pytest

from pytest_osfoundry.client import HttpTransport
from pytest_osfoundry.conformance.server._metadata import metadata_urls, path_inserted
from pytest_osfoundry.conformance.server._target import Credentials, Target

ROOT = "http://127.0.0.1:8000/.well-known/oauth-protected-resource"


def _target(mcp_url: str = "http://127.0.0.1:8000/mcp") -> Target:
    return Target("url", mcp_url, mcp_url, mcp_url, Credentials(), HttpTransport())


@pytest.mark.parametrize(
    ("mcp_url", "expected"),
    [
        ("http://127.0.0.1:8000/mcp", ROOT + "/mcp"),
        ("http://127.0.0.1:8000/api/mcp/", ROOT + "/api/mcp"),
        ("http://127.0.0.1:8000/", ROOT),
    ],
)
def test_the_path_inserted_uri_puts_the_well_known_path_before_the_endpoints(
    mcp_url: str, expected: str
) -> None:
    assert path_inserted(mcp_url) == expected


def test_the_url_the_challenge_names_is_the_only_one_looked_at() -> None:
    challenge = f'Bearer resource_metadata="{ROOT}/mcp", scope="osfoundry:run"'
    assert metadata_urls(_target(), challenge) == [ROOT + "/mcp"]
    assert metadata_urls(_target(), f'Bearer resource_metadata="{ROOT}"') == [ROOT]


@pytest.mark.parametrize(
    "challenge",
    [
        None,
        "",
        'Bearer scope="osfoundry:run"',
        'Bearer resource_metadata="https://elsewhere/x"',
        # no http(s) URL at all: not on the target's origin, never a traceback
        'Bearer resource_metadata="urn:osf"',
        'Bearer resource_metadata="http://[127.0.0.1/x"',
        'Bearer resource_metadata="http://127.0.0.1:port/x"',
    ],
)
def test_without_a_usable_challenge_the_path_inserted_form_comes_first_then_the_root(
    challenge: str | None,
) -> None:
    assert metadata_urls(_target(), challenge) == [ROOT + "/mcp", ROOT]
    assert metadata_urls(_target("http://127.0.0.1:8000/"), challenge) == [ROOT]
