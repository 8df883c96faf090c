"""``osfoundry-fake serve --protocol/--allow-origin/--public-url`` as a real subprocess."""

from __future__ import annotations

import json
import sys

import httpx
import pytest

from tests.server.test_server_cli import first_line, rpc, spawn, stop

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and select")

MODERN_HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "server/discover",
}
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def test_serve_modern_only_with_origins_and_public_url() -> None:
    proc = spawn(
        "--protocol",
        "2026-07-28",
        "--allow-origin",
        "https://app.example",
        "--public-url",
        "https://osf.example/mcp",
    )
    try:
        info = json.loads(first_line(proc))
        url = info["mcp_url"]
        found = httpx.post(url, json=DISCOVER, headers=MODERN_HEADERS, timeout=10).json()
        assert found["result"]["supportedVersions"] == ["2026-07-28"]
        assert (
            rpc(
                url,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            ).status_code
            == 400
        )
        allowed = {**MODERN_HEADERS, "origin": "https://app.example"}
        assert httpx.post(url, json=DISCOVER, headers=allowed, timeout=10).status_code == 200
        foreign = {**MODERN_HEADERS, "origin": "https://evil.example"}
        assert httpx.post(url, json=DISCOVER, headers=foreign, timeout=10).status_code == 403
        meta = httpx.get(
            info["relay_url"] + "/.well-known/oauth-protected-resource",
            headers={"host": "evil.example"},
            timeout=10,
        ).json()
        assert meta["resource"] == "https://osf.example/mcp"
    finally:
        assert stop(proc)[0] == 0


def test_serve_public_url_defaults_to_the_bound_address() -> None:
    proc = spawn("--protocol", "2025-06-18")
    try:
        info = json.loads(first_line(proc))
        meta = httpx.get(
            info["relay_url"] + "/.well-known/oauth-protected-resource",
            headers={"host": "evil.example"},
            timeout=10,
        ).json()
        assert meta["resource"] == info["mcp_url"]
        init = rpc(
            info["mcp_url"],
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ).json()
        assert init["result"]["protocolVersion"] == "2025-06-18"
    finally:
        assert stop(proc)[0] == 0


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--protocol", "2024-11-05"], "2024-11-05"), (["--allow-origin", "nope"], "nope")],
)
def test_serve_bad_protocol_or_origin_is_exit_2(args: list[str], named: str) -> None:
    proc = spawn(*args)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == b""
    assert named.encode() in err and b"Traceback" not in err
