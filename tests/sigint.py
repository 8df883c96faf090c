"""Ctrl-C in the kit's tests, whatever SIGINT disposition the test run inherited.

A process started with SIGINT ignored (``nohup``, ``cmd &`` from a non-interactive
shell, some CI runners) passes that on through ``fork`` and ``exec``, and Python then
installs no ``KeyboardInterrupt`` handler: a SIGINT a test sends does nothing, and a
test of what Ctrl-C does fails with no hint why. The tests that press Ctrl-C put the
handler back where they press it: :func:`ctrl_c_delivered` in this process (the main
thread of an in-process pytest run), :func:`with_default_sigint` in a child.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["ctrl_c_delivered", "with_default_sigint"]

_RESTORE_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def with_default_sigint(argv: Sequence[str]) -> list[str]:
    """``argv`` run with SIGINT's default disposition (so a Python child gets its
    ``KeyboardInterrupt``): a small Python step that resets it and execs ``argv[0]``,
    which must be a path. No ``preexec_fn``, unsafe in a process with threads."""
    return [sys.executable, "-c", _RESTORE_THEN_EXEC, *argv]


@contextmanager
def ctrl_c_delivered() -> Iterator[None]:
    """Within the block, SIGINT to this process raises ``KeyboardInterrupt`` in its main
    thread (Python's own handler), then the disposition is put back as it was. Call from
    the main thread."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
