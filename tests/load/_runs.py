"""Running ``osfoundry-load`` as the tests do: subprocesses on loopback, bounded.

Locust and gevent never enter the pytest process: every load runs in processes of its
own (``python -m pytest_osfoundry.load``), a master and its workers, or one process.

Locust is a dependency of the ``test`` extra (CI runs the loads), so a test that needs
it does not skip when it is missing: :func:`need_locust` fails it, saying how to
install it (as ``tests/aio/test_pytest_asyncio.py`` treats pytest-asyncio), instead of
a traceback from a subprocess. Looking for it imports nothing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: Seconds a whole load run (start, run time, drain, accounting) may take.
RUN_LIMIT = 120.0

#: The rhythm the tests run at: a pass every 4 s, Graphs of a median 0.4 s, polls
#: every 1 s; a tenth of an interval (0.4 s) is what the load's timers may be late.
RHYTHM = [
    "--time-scale", "0.2",
    "--graph-median", "2",
    "--strategy", "every 5 s",
]


@dataclass
class LoadRun:
    """What one load run left: its exit status, its accounting, its output."""

    status: int
    report: dict[str, Any] | None
    stdout: str
    stderr: str


def need_locust() -> None:
    """Fail the calling test, naming the fix, when Locust or gevent is not installed."""
    missing = [m for m in ("locust", "gevent") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not installed: the load tests need the test extra "
            "(pip install -e '.[test]'), which brings Locust",
            pytrace=False,
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def load_command(*args: str) -> list[str]:
    """The command line of ``osfoundry-load`` with ``args`` (Locust must be installed)."""
    need_locust()
    return [sys.executable, "-m", "pytest_osfoundry.load", *args]


def run_load(tmp: Path, target: Path, *, run_time: str, workers: int = 0,
             extra: tuple[str, ...] = ()) -> LoadRun:
    """One headless load against ``target``: one process, or a master and ``workers``."""
    report = tmp / "accounting.json"
    args = ["--headless", "--only-summary", "--loglevel", "WARNING", "-t", run_time,
            "--target", str(target), "--report-json", str(report), *RHYTHM, *extra]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        if workers:
            port = str(_free_port())
            args += ["--master", "--expect-workers", str(workers),
                     "--master-bind-host", "127.0.0.1", "--master-bind-port", port]
            for n in range(workers):
                with (tmp / f"worker{n}.log").open("wb") as log:
                    procs.append(subprocess.Popen(
                        load_command("--worker", "--master-host", "127.0.0.1",
                                     "--master-port", port, "--loglevel", "WARNING"),
                        stdout=log, stderr=subprocess.STDOUT, env=_env(),
                    ))
        done = subprocess.run(load_command(*args), capture_output=True, timeout=RUN_LIMIT,
                              env=_env(), check=False)
    finally:
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return LoadRun(
        done.returncode,
        json.loads(report.read_text()) if report.exists() else None,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )
