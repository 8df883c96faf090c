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
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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


class Running:
    """A load started in the background: its output read as it comes, so a test can
    wait for a line (``wait_for``), signal it, then collect it (``finish``)."""

    def __init__(self, proc: subprocess.Popen[bytes], report: Path,
                 workers: list[subprocess.Popen[bytes]]) -> None:
        self.proc = proc
        self.report = report
        self.workers = workers
        self._out: list[bytes] = []
        self._err: list[str] = []
        self._seen = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(proc.stdout, self._out), daemon=True),
            threading.Thread(target=self._read_lines, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[bytes] | None, into: list[bytes]) -> None:
        assert stream is not None
        for chunk in iter(lambda: stream.read(65536), b""):
            into.append(chunk)

    def _read_lines(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._seen:
                self._err.append(line.decode(errors="replace"))
                self._seen.notify_all()

    def wait_for(self, *texts: str, timeout: float = 60.0) -> None:
        """Wait until a line of the load's stderr holds one of ``texts``; fail the test
        if none does within ``timeout`` seconds or the load ended first."""
        deadline = time.monotonic() + timeout
        with self._seen:
            while not any(text in line for line in self._err for text in texts):
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._readers[1].is_alive()):
                    pytest.fail(f"the load never said {texts!r}:\n{''.join(self._err)}")
                self._seen.wait(min(left, 0.1))

    def finish(self, timeout: float = RUN_LIMIT) -> LoadRun:
        """Wait for the load (and its workers) to end; what it left."""
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for worker in self.workers:
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait()
        for reader in self._readers:
            reader.join(timeout=10)
        return LoadRun(
            self.proc.returncode,
            json.loads(self.report.read_text()) if self.report.exists() else None,
            b"".join(self._out).decode(errors="replace"),
            "".join(self._err),
        )


def start_load(tmp: Path, target: Path, *, run_time: str, workers: int = 0,
               extra: tuple[str, ...] = ()) -> Running:
    """Start one headless load against ``target``: one process, or a master and
    ``workers`` (the master's ``--loglevel`` is WARNING unless ``extra`` gives one)."""
    report = tmp / "accounting.json"
    args = ["--headless", "--only-summary", "--loglevel", "WARNING", "-t", run_time,
            "--target", str(target), "--report-json", str(report), *RHYTHM, *extra]
    procs: list[subprocess.Popen[bytes]] = []
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
    proc = subprocess.Popen(load_command(*args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env())
    return Running(proc, report, procs)


def run_load(tmp: Path, target: Path, *, run_time: str, workers: int = 0,
             extra: tuple[str, ...] = ()) -> LoadRun:
    """One headless load against ``target``: one process, or a master and ``workers``."""
    return start_load(tmp, target, run_time=run_time, workers=workers, extra=extra).finish()


@contextmanager
def serve(folder: Path, *, accounts: int, agents: int) -> Iterator[tuple[dict[str, Any], Path]]:
    """``osfoundry-fake serve --accounts N --agents-per-account M``: its JSON line and
    its accounts file (in ``folder``), for the time of the ``with``."""
    file = folder / "accounts.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve", "--accounts", str(accounts),
         "--agents-per-account", str(agents), "--accounts-file", str(file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = json.loads(proc.stdout.readline())
        yield line, file
    finally:
        proc.terminate()
        proc.wait(timeout=10)
