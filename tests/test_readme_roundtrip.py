"""The README's curl round trip against ``osfoundry-fake serve --relay`` is true: its
commands run here (with curl when it is installed, else the same requests through
httpx) against the fake the README starts, and the run completes. With curl the whole
block runs as written, the fake started by it, slowly (issue 42 item 13: the block
must wait for serve's JSON line, however long serve takes to print it)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
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
GSID = re.findall(r'"graph_session_id":"(gs_[0-9a-f]{32})"', BLOCK)[0]


def _logical_lines(text: str) -> list[str]:
    """The block's commands, continuation lines joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.startswith("#")]


LINES = _logical_lines(BLOCK)
#: The block's wait for serve's JSON line (a shell loop the httpx run stands in for).
WAITS = [ln for ln in LINES if ln.startswith("until ")]


@pytest.fixture
def fake() -> Iterator[dict[str, Any]]:
    """The fake exactly as the README starts it, on a free port instead of 8765."""
    args = shlex.split(LINES[0].rstrip("&"))
    assert args[:3] == ["osfoundry-fake", "serve", "--relay"]
    args = args[: args.index(">")]  # the file the block reads its JSON line from
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_block_with_a_slow_start(folder: Path) -> list[dict[str, Any]]:
    """The whole block in bash, as written, in ``folder``, on a free port, where
    ``osfoundry-fake`` is a shim that waits 2 s before it starts serve (a slow machine):
    the answers it printed. Its process group (the fake the block left running
    included) is ended afterwards."""
    port = _free_port()
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "osfoundry-fake"
    python = shlex.quote(sys.executable)
    shim.write_text(f'#!/bin/sh\nsleep 2\nexec {python} -m pytest_osfoundry "$@"\n')
    shim.chmod(0o755)
    script = "set -e\n" + "\n".join(LINES).replace("8765", str(port))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    out, err = folder / "stdout", folder / "stderr"  # files: the fake keeps them open
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            ["bash", "-c", script], cwd=folder, env=env, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )
    try:
        proc.wait(timeout=90)
    finally:
        _end_group(proc.pid)
    assert proc.returncode == 0, err.read_text()
    return _answers(out.read_text())


def _end_group(group: int) -> None:
    """SIGTERM to every process of ``group`` (the serve the block left running), then
    wait until none is left."""
    deadline = time.monotonic() + 10
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
        while time.monotonic() < deadline:
            os.killpg(group, 0)
            time.sleep(0.05)
        os.killpg(group, signal.SIGKILL)


def _run_with_httpx(origin: str) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    variables: dict[str, str] = {}
    for line in LINES[1:]:
        if line in WAITS:  # the fixture waited for the JSON line
            continue
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


def test_the_block_waits_for_serves_json_line() -> None:
    assert LINES[0].endswith("> fake.json &") and len(WAITS) == 1
    assert LINES.index(WAITS[0]) == 1  # before the first request


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("bash")),
                    reason="curl or bash is not installed; the httpx run covers the requests")
def test_the_readme_block_runs_as_written_on_a_slow_start(tmp_path: Path) -> None:
    _check_answers(_run_block_with_a_slow_start(tmp_path))


def test_the_readme_requests_complete_through_httpx(fake: dict[str, Any]) -> None:
    assert GSID in {s["graph_session_id"] for s in fake["sessions"]}
    _check_answers(_run_with_httpx(fake["relay_url"]))


def _check_answers(answers: list[dict[str, Any]]) -> None:
    listing, run = answers
    shared = listing["result"]["structuredContent"]["sessions"]
    assert GSID in {s["graph_session_id"] for s in shared}
    view = run["result"]["structuredContent"]
    said = re.search(r"The last answer's `structuredContent` has (.*?)\n\n", README, flags=re.S)
    assert said is not None
    fields = re.findall(r'`"(\w+)":(.*?)`', said.group(1), flags=re.S)
    assert {name for name, _ in fields} == {"status", "result", "total_tokens", "reported_cost"}
    for name, value in fields:  # what the README says the answer holds, it holds
        assert view.get(name) == json.loads(value), (name, view)
