"""A :class:`~pytest_osfoundry.server.LoopbackServer` in a child process of its own.

``--osf-target=embedded`` runs the suite and the reference server on one machine. In
one process they share one interpreter lock, so the server's work (about 40 % of the
CPU of a run) and the checks' work take turns on one core. :class:`ForkedServer`
serves the same handler from a forked child instead: the two halves then run on two
cores, and the whole run takes 0.94-0.96x as long (0.05-0.07 s less on 2 cores;
``python benchmarks/bench_suite_floor.py --only parts`` measures it, paired). It is a
speed trick on the path users wait for most, so it is taken only where it is safe;
:func:`can_fork` says where.

Promises:

* **Same server, same wire.** The child serves ``handler`` -- the object as it was at
  the fork, provisioned tokens and all -- with a ``LoopbackServer`` on
  ``127.0.0.1`` and a free port. The parent's copy of ``handler`` is left as it was and
  no longer sees requests.
* **Ready when built.** The constructor returns once the child listens, or raises
  :class:`ForkError` naming what stopped it (the child is reaped).
* **No orphan.** The child lives while the parent holds a pipe to it:
  :meth:`ForkedServer.close`, the parent's exit or its death (even ``kill -9``) close
  the pipe and the child ends at once (``os._exit``: no ``atexit`` handler, buffer or
  finalizer of the parent runs twice). :meth:`ForkedServer.close` waits for it (5 s,
  then ``SIGKILL``), so no zombie is left.
* **Quiet and apart.** The child reads nothing and writes nothing (its standard streams
  are ``/dev/null``), ignores ``SIGINT`` (a Ctrl-C stops the parent, whose exit ends
  the child), and closes the pipes of any other ``ForkedServer`` it inherited, so each
  child's life hangs on its own parent alone. Other files it inherits stay open, as
  after any fork; closing them could close what a stale object of the parent's still
  names once the number is reused.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
import weakref
from typing import NoReturn

from pytest_osfoundry.http import Handler
from pytest_osfoundry.server._loopback import LoopbackServer

__all__ = ["ForkError", "ForkedServer", "can_fork"]

READY_WITHIN = 10.0
"""Seconds the child has to start listening."""

STOP_WITHIN = 5.0
"""Seconds :meth:`ForkedServer.close` waits for the child before ``SIGKILL``."""

_live: weakref.WeakSet[ForkedServer] = weakref.WeakSet()
"""The servers this process has forked and not closed: a new child closes their pipes."""


class ForkError(RuntimeError):
    """The child could not start serving; the message says why."""


def can_fork() -> bool:
    """Whether a server may be forked from this process now: on Linux, with no thread
    but the calling one (forking a process with other threads may deadlock the child
    on a lock one of them held, and Python 3.12+ warns of it)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    if threading.active_count() != 1:
        return False
    try:  # threads Python does not know of (a C library's own)
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class ForkedServer:
    """Serve ``handler`` over HTTP from a forked child; :attr:`origin` is its address.

    Raises:
        ForkError: forking is not possible here (:func:`can_fork`), or the child could
            not listen (the message names the cause).
    """

    def __init__(self, handler: Handler, *, workers: int = 16) -> None:
        if not can_fork():
            raise ForkError("cannot fork here: not Linux, or other threads are running")
        ready_read, ready_write = os.pipe()
        stop_read, stop_write = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            pid = os.fork()
        except OSError as err:  # out of processes or memory
            for fd in (ready_read, ready_write, stop_read, stop_write):
                os.close(fd)
            raise ForkError(f"cannot fork the server's child process: {err}") from None
        if pid == 0:  # the child: never returns
            os.close(ready_read)
            os.close(stop_write)
            _serve_in_child(handler, workers, ready_write, stop_read)
        os.close(ready_write)
        os.close(stop_read)
        self.pid = pid
        self.returncode: int | None = None
        """The child's exit code once :meth:`close` has reaped it (``-9``: it had to be
        killed), ``None`` before."""
        self._stop = stop_write
        try:
            self.port = _await_port(ready_read)
        except BaseException:
            self._stop_child()
            raise
        finally:
            os.close(ready_read)
        self.host = "127.0.0.1"
        _live.add(self)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:port`` of the serving child."""
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        """End the child and reap it (idempotent)."""
        if self._stop >= 0:
            _live.discard(self)
            self._stop_child()

    def _stop_child(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._stop)
        self._stop = -1
        self.returncode = _reap(self.pid)

    def __enter__(self) -> ForkedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._stop < 0 else self.origin
        return f"ForkedServer(pid={self.pid}, {state})"


def _await_port(ready: int) -> int:
    """The port the child reports on ``ready``; ForkError if it reports a failure,
    ends, or says nothing within :data:`READY_WITHIN`."""
    deadline = time.monotonic() + READY_WITHIN
    waiting = select.poll()  # not select(): a descriptor above 1023 is refused there
    waiting.register(ready, select.POLLIN)
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not waiting.poll(left * 1000):
            raise ForkError(f"the server's child process did not listen within {READY_WITHIN} s")
        chunk = os.read(ready, 1024)
        if not chunk:
            break
        data += chunk
    text = data.decode("utf-8", "replace").strip()
    if text.isdigit():
        return int(text)
    raise ForkError(f"the server's child process could not listen: {text or 'it ended'}")


def _reap(pid: int) -> int | None:
    """Wait for ``pid`` to end (:data:`STOP_WITHIN`, then ``SIGKILL``); its exit code
    (``None``: reaped by someone else)."""
    deadline = time.monotonic() + STOP_WITHIN
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            try:
                return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            except ChildProcessError:
                return None
        time.sleep(0.002)


def _serve_in_child(handler: Handler, workers: int, ready: int, stop: int) -> NoReturn:
    """The child's whole life: listen, report the port, serve until ``stop`` closes."""
    code = 0
    try:
        with contextlib.suppress(ValueError):  # not the main thread: no handler to set
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        for other in list(_live):  # pipes of servers forked earlier: not ours to hold
            with contextlib.suppress(OSError):
                os.close(other._stop)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        try:
            loop = LoopbackServer(handler, workers=workers)
        except Exception as err:
            os.write(ready, f"{type(err).__name__}: {err}\n".encode())
            code = 1
        else:
            os.write(ready, f"{loop.port}\n".encode())
            os.close(ready)
            while os.read(stop, 1):  # EOF: the parent closed it, or ended
                pass
    except BaseException:
        code = 1
    finally:
        os._exit(code)
