"""A suite's preflight watch: a command just started, watched for its first sign of life.

:func:`first_sign` is what the relay and agent preflights share: the command is
watched until the suite sees it work (``ready()``), it exits, it shows a problem of its
own (``wrong()``), or ``seconds`` pass. Each way it fails is one message, followed by
its last lines of output with the token masked; the process is then stopped (SIGTERM,
SIGKILL 5 s later).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pytest_osfoundry.conformance.command._process import CommandProcess

__all__ = ["first_sign"]


def first_sign(
    process: CommandProcess,
    ready: Callable[[], bool],
    *,
    seconds: float,
    exited: Callable[[int], str],
    late: str,
    tail: str,
    wrong: Callable[[], str | None] = lambda: None,
    pause: Callable[[], object] = lambda: time.sleep(0.05),
) -> str | None:
    """``None`` once ``ready()`` holds; else the problem: ``exited(status)`` if the
    process ended first, ``wrong()``'s if it says one, ``late`` after ``seconds``, each
    followed by ``tail`` and the process's last lines of output. ``pause()`` waits
    between looks."""
    deadline = time.monotonic() + seconds
    problem = None
    while problem is None:
        if ready():
            return None
        status = process.exited()
        if status is not None:
            problem = exited(status)
        else:
            problem = wrong() or (late if time.monotonic() > deadline else None)
            if problem is None:
                pause()
    process.stop()  # its output read to the end
    lines = process.output_tail()
    return f"{problem}\n{tail}:\n{lines}" if lines else problem
