"""The agent under test as a child process: started, watched, stopped, never orphaned.

:class:`AgentProcess` starts ``CMD`` split as a POSIX shell would (:func:`split_agent_command`:
:func:`shlex.split`, no shell), with the contract's environment, in a process group
of its own, stdin closed. What it prints (stdout and stderr, merged) is read by a
thread that keeps only the last :data:`OUTPUT_KEPT` bytes and counts the rest, so an
agent flooding its output costs the suite neither memory nor disk
(:meth:`AgentProcess.output_text`, tokens masked; :attr:`AgentProcess.output_bytes`).
:meth:`AgentProcess.stop` sends SIGTERM to the group and SIGKILL
:data:`STOP_GRACE_SECONDS` later, then SIGKILL to the group again, so no descendant
outlives its agent. Every process still running when the interpreter exits (Ctrl-C
included) is killed with its group (:func:`kill_all`, registered with :mod:`atexit`).
The relay suite's :mod:`~pytest_osfoundry.conformance.command._process` does the same for
a relay, whose output goes to a file (a relay's stdout is not part of its contract).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping, Sequence

from pytest_osfoundry.client import mask_token

__all__ = [
    "EMBEDDED_AGENT",
    "OUTPUT_KEPT",
    "STOP_GRACE_SECONDS",
    "AgentCommandError",
    "AgentProcess",
    "kill_all",
    "split_agent_command",
]

EMBEDDED_AGENT = "embedded"
STOP_GRACE_SECONDS = 5.0
OUTPUT_KEPT = 262_144
"""The most of an agent's output (its last bytes) a check keeps for its report."""

_LIVE: set[AgentProcess] = set()
_LIVE_LOCK = threading.Lock()


class AgentCommandError(Exception):
    """The agent command cannot be split or started (the message says why)."""


def split_agent_command(command: str) -> list[str]:
    """``CMD`` as argv: ``embedded`` is the kit's own agent under this interpreter."""
    if command.strip() == EMBEDDED_AGENT:
        return [sys.executable, "-m", "pytest_osfoundry.agent"]
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise AgentCommandError(
            f"the agent command cannot be split as a shell would: {err}"
        ) from None
    if not argv:
        raise AgentCommandError("the agent command is empty")
    return argv


class AgentProcess:
    """One run of the agent command (see the module); ``secrets`` masked in its output;
    each of ``unset`` that ``env`` does not give left out of pytest's environment (a
    variable the suite leaves out on purpose must not leak in from pytest's)."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | None = None,
        secrets: Sequence[str] = (),
        unset: Sequence[str] = (),
    ) -> None:
        self.argv = list(argv)
        self.secrets = [s for s in secrets if s]
        self._kept: deque[bytes] = deque()
        self._kept_bytes = 0
        self.output_bytes = 0
        """Every byte the agent printed (the kept ones and those dropped)."""
        self._lock = threading.Lock()
        full_env = {**os.environ, **env}
        for name in unset:
            if name not in env:
                full_env.pop(name, None)
        try:
            self.popen = subprocess.Popen(
                self.argv,
                env=full_env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise AgentCommandError(f"the agent command was not found: {self.argv[0]}") from None
        except PermissionError:
            raise AgentCommandError(
                f"the agent command is not executable: {self.argv[0]}"
            ) from None
        except OSError as err:
            raise AgentCommandError(f"the agent command cannot be started: {err}") from None
        with _LIVE_LOCK:
            _LIVE.add(self)
        self._reader = threading.Thread(target=self._read, name="osf-agent-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.popen.stdout
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65_536):
                with self._lock:
                    self.output_bytes += len(chunk)
                    self._kept.append(chunk)
                    self._kept_bytes += len(chunk)
                    while self._kept_bytes - len(self._kept[0]) >= OUTPUT_KEPT:
                        self._kept_bytes -= len(self._kept.popleft())
        with contextlib.suppress(OSError):
            stream.close()

    @property
    def pid(self) -> int:
        """The process id (also its group id)."""
        return self.popen.pid

    def exited(self) -> int | None:
        """The exit status if the process has ended, else ``None``."""
        return self.popen.poll()

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the process to end; its status or ``None``."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> int:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds; the exit status.

        Whatever is left in the group is killed as well, and its output read to the end.
        """
        if self.popen.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait()
        self._signal_group(signal.SIGKILL)  # no child outlives its agent
        self._reader.join(5.0)
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return self.popen.returncode

    def kill(self) -> int:
        """SIGKILL to the group at once; the exit status."""
        self._signal_group(signal.SIGKILL)
        self.popen.wait()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return self.popen.returncode

    def output_text(self, limit: int = OUTPUT_KEPT) -> str:
        """What the agent printed, its last ``limit`` bytes at most (a cut first line
        left out), tokens masked."""
        with self._lock:
            data = b"".join(self._kept)
            dropped = self.output_bytes > len(data)
        if len(data) > limit:
            data, dropped = data[-limit:], True
        text = data.decode("utf-8", "replace")
        if dropped:
            text = text.partition("\n")[2]
        return mask_token(text, self.secrets) if self.secrets else text

    def shows_secret(self) -> bool:
        """Whether a secret appears in what the agent printed (the kept output), in any
        form :func:`~pytest_osfoundry.client.mask_token` knows (raw, quoted, encoded)."""
        with self._lock:
            text = b"".join(self._kept).decode("utf-8", "replace")
        return bool(self.secrets) and mask_token(text, self.secrets) != text

    def output_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the agent printed, tokens masked."""
        return "\n".join(self.output_text(16_384).splitlines()[-lines:])


def kill_all() -> None:
    """SIGKILL every agent process group still running (interpreter exit, Ctrl-C)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        process.kill()


atexit.register(kill_all)
