"""Where ``--osf-target=embedded`` serves the reference server from (``_target._serve``).

The plain ``embedded`` target is served from a forked child when the pytest process
has no other thread (two cores instead of one: ``benchmarks/bench_suite_floor.py``);
a factory's server (``embedded:MODULE:FACTORY``) always from this process, so a test
can look at it afterwards. Each case runs in a fresh Python process: an xdist worker
holds threads of its own, and forking is refused there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json, os, sys, threading
from pytest_osfoundry.conformance._options import Settings
from pytest_osfoundry.conformance._target import resolve_target
if sys.argv[2] == "with-a-thread":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
target = resolve_target(Settings(osf_target=sys.argv[1]))
served = target._loopback
reply = target.transport.request(
    "GET", target.origin + "/.well-known/oauth-protected-resource", {}, b""
)
seen = {
    "kind": type(served).__name__,
    "child": getattr(served, "pid", os.getpid()) != os.getpid(),
    "status": reply.status,
}
target.close()
seen["returncode"] = getattr(served, "returncode", None)
print(json.dumps(seen))
"""


def _served(spec: str, threads: str = "alone") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, spec, threads],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=_ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked on Linux only")
def test_plain_embedded_is_served_from_a_child_that_ends_with_the_target() -> None:
    seen = _served("embedded")
    assert seen == {"kind": "ForkedServer", "child": True, "status": 200, "returncode": 0}


def test_plain_embedded_is_served_in_process_when_another_thread_runs() -> None:
    seen = _served("embedded", "with-a-thread")
    assert seen == {"kind": "LoopbackServer", "child": False, "status": 200, "returncode": None}


def test_a_factorys_server_is_served_in_process() -> None:
    seen = _served("embedded:tests.conformance.variants:reference")
    assert seen == {"kind": "LoopbackServer", "child": False, "status": 200, "returncode": None}
