"""The reference server served from a forked child (``server/_forked.py``).

Forking is only allowed from a process with one thread, and an xdist worker (or any
pytest process with a server fixture running) has more: every scenario runs in a
fresh Python process of its own, which reports what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the server is forked on Linux only"
)

_PRELUDE = """
import json, os, signal, socket, sys, threading
import httpx
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._forked import ForkedServer, ForkError, can_fork

def listed(server, token):
    reply = httpx.post(
        server.origin + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream",
                 "Authorization": "Bearer " + token,
                 "MCP-Protocol-Version": "2025-11-25"},
    )
    return reply.status_code, sorted(t["name"] for t in reply.json()["result"]["tools"])

def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False

out = {}
"""

_SCENARIOS = {
    "serves": """
ref = ReferenceServer(); made = ref.provision()
server = ForkedServer(ref)
out["child"] = server.pid != os.getpid()
out["listed"] = listed(server, made.agent_token)
server.close()
out["returncode"] = server.returncode
out["refused"] = refused(server.port)
server.close()
out["again"] = server.returncode
""",
    "sigint": """
ref = ReferenceServer(); made = ref.provision()
server = ForkedServer(ref)
os.kill(server.pid, signal.SIGINT)
out["listed"] = listed(server, made.agent_token)
server.close()
out["returncode"] = server.returncode
""",
    "two": """
first_ref = ReferenceServer(); first_made = first_ref.provision()
first = ForkedServer(first_ref)
second_ref = ReferenceServer(); second_made = second_ref.provision()
second = ForkedServer(second_ref)
first.close()
out["first"] = first.returncode
out["second_listed"] = listed(second, second_made.agent_token)
second.close()
out["second"] = second.returncode
""",
    "bad_handler": """
try:
    ForkedServer(object())
except ForkError as err:
    out["error"] = str(err)
try:
    os.waitpid(-1, os.WNOHANG)
    out["children_left"] = True
except ChildProcessError:
    out["children_left"] = False
""",
    "fork_fails": """
import errno
fds = len(os.listdir("/proc/self/fd"))
def refused():
    raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
os.fork = refused
try:
    ForkedServer(ReferenceServer())
except ForkError as err:
    out["error"] = str(err)
out["fds_left"] = len(os.listdir("/proc/self/fd")) - fds
""",
    "threads": """
out["alone"] = can_fork()
threading.Thread(target=threading.Event().wait, daemon=True).start()
out["with_a_thread"] = can_fork()
try:
    ForkedServer(ReferenceServer())
except ForkError as err:
    out["error"] = str(err)
""",
    "orphan": """
ref = ReferenceServer(); ref.provision()
server = ForkedServer(ref)
print(json.dumps({"pid": server.pid, "port": server.port}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
""",
}


def _run(name: str) -> subprocess.CompletedProcess[str]:
    code = _PRELUDE + _SCENARIOS[name] + "\nprint(json.dumps(out))\n"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def _report(name: str) -> dict[str, Any]:
    done = _run(name)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_the_child_serves_the_provisioned_server_and_is_gone_after_close() -> None:
    seen = _report("serves")
    assert seen["child"] is True
    status, names = seen["listed"]
    assert status == 200
    assert "run_graph_session" in names
    assert seen["returncode"] == 0  # it ended by itself, not killed after the wait
    assert seen["refused"] is True
    assert seen["again"] == 0  # a second close changes nothing


def test_a_ctrl_c_reaching_the_child_does_not_stop_it() -> None:
    seen = _report("sigint")
    assert seen["listed"][0] == 200
    assert seen["returncode"] == 0


def test_a_later_child_does_not_keep_an_earlier_one_alive() -> None:
    seen = _report("two")
    assert seen["first"] == 0  # not -9: its pipe closed although the second was forked since
    assert seen["second_listed"][0] == 200
    assert seen["second"] == 0


def test_a_child_that_cannot_serve_is_a_clear_error_and_leaves_no_process() -> None:
    seen = _report("bad_handler")
    assert "could not listen" in seen["error"]
    assert "TypeError: handler must be callable" in seen["error"]
    assert seen["children_left"] is False


def test_a_fork_the_system_refuses_is_a_clear_error_and_leaks_no_pipe() -> None:
    seen = _report("fork_fails")
    assert seen["error"] == (
        "cannot fork the server's child process: [Errno 11] Resource temporarily unavailable"
    )
    assert seen["fds_left"] == 0


def test_no_fork_while_another_thread_runs() -> None:
    seen = _report("threads")
    assert seen["alone"] is True
    assert seen["with_a_thread"] is False
    assert "other threads are running" in seen["error"]


def _ended(pid: int) -> bool:
    """Whether ``pid`` has ended (gone, or a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_the_child_ends_when_its_parent_is_killed() -> None:
    done = _run("orphan")
    assert done.returncode == -signal.SIGKILL
    child = json.loads(done.stdout.strip().splitlines()[0])
    deadline = time.monotonic() + 10
    while not _ended(child["pid"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    ended = _ended(child["pid"])
    if not ended:  # do not leave it behind whatever the verdict
        os.kill(child["pid"], signal.SIGKILL)
    assert ended, "the server's child outlived its killed parent"
