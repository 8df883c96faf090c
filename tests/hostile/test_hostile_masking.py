"""Secrets stay masked whatever form a hostile server echoes them in, wherever the suite writes.

The ``echo-token`` server answers every request with the bearer token it was sent:
raw, URL-encoded, base64 and URL-safe base64. The suite's terminal output, JSON
report and JUnit XML must carry none of these forms.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from pytest_osfoundry._masking import MASK, mask_token, mask_url
from tests.hostile.osf_hostile_kit import HostileServer

TOKEN = "agent-Secret/Token+0123456789"


def _forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        quote(secret, safe=""),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        json.dumps(secret)[1:-1],
        "".join(f"\\u{ord(ch):04x}" for ch in secret),
    ]


@pytest.fixture(autouse=True)
def _no_osf_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OSF_"):
            monkeypatch.delenv(name)
    yield


@pytest.mark.parametrize("form", range(6))
def test_every_form_of_a_secret_is_masked(form: int) -> None:
    echoed = _forms(TOKEN)[form]
    assert mask_token(f"before {echoed} after", [TOKEN]) == f"before {MASK} after"


@pytest.mark.parametrize("lead", [b"", b"u", b"us", b"user:", b'{"token": "'])
def test_base64_inside_a_longer_text_is_masked_at_any_alignment(lead: bytes) -> None:
    blob = base64.b64encode(lead + TOKEN.encode() + b'"}').decode()
    masked = mask_token(blob, [TOKEN])
    encoded_token = len(TOKEN) * 4 // 3
    removed = len(blob) - len(masked) + len(MASK)
    assert removed >= encoded_token - 8  # all but the two groups shared with neighbours


def test_url_credentials_are_masked() -> None:
    assert mask_url("https://ops:hunter2pass@x.test/mcp") == "https://***@x.test/mcp"
    assert "hunter2pass" not in mask_url("https://ops:hunter2pass@x.test/mcp?token=abc")


def test_a_malformed_target_is_echoed_masked(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--osf-target=ftp://ops:hunter2pass@x.test/mcp?access_token=" + TOKEN,
        f"--osf-agent-token={TOKEN}",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "neither an http(s) URL" in text
    assert "hunter2pass" not in text and TOKEN not in text


def test_suite_output_carries_no_echoed_form_of_the_token(pytester: pytest.Pytester) -> None:
    with HostileServer("echo-token") as server:
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            f"--osf-report={pytester.path / 'r.json'}",
            f"--junitxml={pytester.path / 'junit.xml'}",
            f"--osf-target={server.url}",
            f"--osf-agent-token={TOKEN}",
            "--osf-desktop-token=desk-Secret-Token-987654321",
            "--osf-project-id=p1",
            "--osf-timeout=2",
            "-k",
            "D3 or R1 or R3",
        )
    written = [
        result.stdout.str(),
        result.stderr.str(),
        (pytester.path / "r.json").read_text(encoding="utf-8"),
        (pytester.path / "junit.xml").read_text(encoding="utf-8"),
    ]
    assert "echo" in written[2]  # the echoing answers really are in the report
    for text in written:
        for form in _forms(TOKEN) + _forms("desk-Secret-Token-987654321"):
            assert form not in text
