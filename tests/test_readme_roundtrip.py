"""The README's curl round trip against ``osfoundry-fake serve --relay`` is true: its
commands run here (with curl when it is installed, else the same requests through
httpx) against the fake the README starts, and the run completes."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell and select")

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = next(b for b in re.findall(r"```sh\n(.*?)```", README, flags=re.S) if "serve --relay" in b)
PORT_URL = "http://127.0.0.1:8765"


def _logical_lines(text: str) -> list[str]:
    """The block's commands, continuation lines joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.startswith("#")]


LINES = _logical_lines(BLOCK)


@pytest.fixture
def fake() -> Iterator[dict[str, Any]]:
    """The fake exactly as the README starts it, on a free port instead of 8765."""
    args = shlex.split(LINES[0].rstrip("&"))
    assert args[:3] == ["osfoundry-fake", "serve", "--relay"]
    args[args.index("--port") + 1] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", *args[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "serve --relay printed nothing"
        yield json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def _answers(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    out, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        value, pos = decoder.raw_decode(text, pos)
        out.append(value)
    return out


def _run_with_curl(origin: str) -> list[dict[str, Any]]:
    script = "set -e\n" + "\n".join(LINES[1:]).replace(PORT_URL, origin)
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert done.returncode == 0, done.stderr
    return _answers(done.stdout)


def _run_with_httpx(origin: str) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    variables: dict[str, str] = {}
    for line in LINES[1:]:
        if line.startswith("sleep "):
            time.sleep(float(line.split()[1]))
            continue
        name = None
        if line.startswith("COMMAND=$("):
            name, line = "COMMAND", line[len("COMMAND=$(") :].split(" | ", 1)[0]
        words = shlex.split(line)
        assert words[0] == "curl"
        url = next(w for w in words[1:] if w.startswith("http")).replace(PORT_URL, origin)
        headers = dict(words[i + 1].split(": ", 1) for i, w in enumerate(words) if w == "-H")
        body = words[words.index("-d") + 1]
        for key, value in variables.items():
            body = body.replace(f"${key}", value)
        reply = httpx.post(url, content=body.encode(), headers=headers, timeout=10).json()
        if name is not None:
            variables[name] = reply["result"]["structuredContent"]["command_id"]
        else:
            answers.append(reply)
    return answers


@pytest.mark.parametrize("tool", ["curl", "httpx"])
def test_the_readme_curl_round_trip_completes(fake: dict[str, Any], tool: str) -> None:
    if tool == "curl" and not (shutil.which("curl") and shutil.which("bash")):
        pytest.skip("curl or bash is not installed; the httpx run covers the same requests")
    gsid = re.search(r'"graph_session_id":"(gs_[0-9a-f]{32})"', BLOCK)
    assert gsid is not None
    assert gsid.group(1) in {s["graph_session_id"] for s in fake["sessions"]}
    origin = fake["relay_url"]
    listing, run = (_run_with_curl if tool == "curl" else _run_with_httpx)(origin)
    shared = listing["result"]["structuredContent"]["sessions"]
    assert gsid.group(1) in {s["graph_session_id"] for s in shared}
    view = run["result"]["structuredContent"]
    said = re.search(r"The last answer's `structuredContent` has (.*?)\n\n", README, flags=re.S)
    assert said is not None
    fields = re.findall(r'`"(\w+)":(.*?)`', said.group(1), flags=re.S)
    assert {name for name, _ in fields} == {"status", "result", "total_tokens", "reported_cost"}
    for name, value in fields:  # what the README says the answer holds, it holds
        assert view.get(name) == json.loads(value), (name, view)
