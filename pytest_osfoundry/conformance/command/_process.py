"""An outside command under test as a child process: started, watched, stopped, never
orphaned. The relay suite runs its relay through it (and the agent suite, an agent).

:func:`split_command` splits ``CMD`` as a POSIX shell would (:func:`shlex.split`, no
shell; a suite's ``embedded`` names the kit's own program). :class:`CommandProcess`
starts it in pytest's working directory, with the suite's contract environment, in a
process group of its own, stdin closed. :meth:`CommandProcess.stop` sends SIGTERM to the
group and SIGKILL 5 s later, then SIGKILL to the group again, so no descendant outlives
it; :meth:`CommandProcess.kill` sends SIGKILL at once. What it writes (its stderr, or
stdout and stderr merged: the agent's) is read from a pipe by a thread that keeps only
the last :data:`OUTPUT_KEPT` bytes and counts the rest, so a command flooding its
output costs the suite neither memory nor disk: :meth:`CommandProcess.output_tail`
gives its last lines, :meth:`CommandProcess.output_text` its text, tokens masked.
:class:`CommandStarts` is one check's starts of its command: the latest stopped or
killed on demand, what each start wrote, every one closed with the check.
Every process still running when the interpreter exits (Ctrl-C included) is killed
with its group (:func:`kill_all`, registered with :mod:`atexit`).
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
from typing import IO

from pytest_osfoundry.client import mask_cut_end, mask_token

__all__ = [
    "EMBEDDED_COMMAND",
    "OUTPUT_KEPT",
    "STOP_GRACE_SECONDS",
    "CommandError",
    "CommandProcess",
    "CommandStarts",
    "kill_all",
    "split_command",
]

EMBEDDED_COMMAND = "embedded"
STOP_GRACE_SECONDS = 5.0
OUTPUT_KEPT = 262_144
"""The most of a command's output (its last bytes) a check keeps for its report."""

_LIVE: set[CommandProcess] = set()
_LIVE_LOCK = threading.Lock()


class CommandError(Exception):
    """The command cannot be split or started (the message says why, naming the command)."""


def split_command(command: str, *, what: str, embedded_module: str) -> list[str]:
    """``CMD`` as argv: ``embedded`` is ``python -m embedded_module`` under this
    interpreter (the kit's own program). ``what`` names the command in an error
    (``"the relay command"``).

    Raises:
        CommandError: ``CMD`` cannot be split as a shell would, or is empty.
    """
    if command.strip() == EMBEDDED_COMMAND:
        return [sys.executable, "-m", embedded_module]
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise CommandError(f"{what} cannot be split as a shell would: {err}") from None
    if not argv:
        raise CommandError(f"{what} is empty")
    return argv


class CommandProcess:
    """One run of a command (see the module): pytest's environment plus ``env``, less
    each of ``unset`` that ``env`` does not give (a variable the suite leaves out on
    purpose must not leak in from pytest's); ``what`` names it in an error
    (``"the relay command"``); ``secrets`` are masked in its output; ``stdout``: its
    stdout is kept with its stderr (else dropped).

    Raises:
        CommandError: the command is not found, not executable, or cannot be started.
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        what: str,
        cwd: str | None = None,
        secrets: Sequence[str] = (),
        unset: Sequence[str] = (),
        stdout: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.secrets = [s for s in secrets if s]
        self._kept: deque[bytes] = deque()
        self._kept_bytes = 0
        self.output_bytes = 0
        """Every byte the command wrote (the kept ones and those dropped)."""
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
                stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                stderr=subprocess.STDOUT if stdout else subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise CommandError(f"{what} was not found: {self.argv[0]}") from None
        except PermissionError:
            raise CommandError(f"{what} is not executable: {self.argv[0]}") from None
        except OSError as err:
            raise CommandError(f"{what} cannot be started: {err}") from None
        with _LIVE_LOCK:
            _LIVE.add(self)
        stream = self.popen.stdout if stdout else self.popen.stderr
        assert stream is not None
        self._reader = threading.Thread(
            target=self._read, args=(stream,), name="osf-command-output", daemon=True
        )
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
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
        self._signal_group(signal.SIGKILL)  # no child outlives its command
        self._reader.join(5.0)
        self._forget()
        return self.popen.returncode

    def kill(self) -> int:
        """SIGKILL to the group at once (a crash); the exit status."""
        self._signal_group(signal.SIGKILL)
        self.popen.wait()
        self._forget()
        return self.popen.returncode

    def _forget(self) -> None:
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def output_text(self, limit: int = OUTPUT_KEPT) -> str:
        """What the command wrote, its last ``limit`` bytes at most (a cut first line
        left out), tokens masked ('' once closed)."""
        with self._lock:
            data = b"".join(self._kept)
            dropped = self.output_bytes > len(data)
        if len(data) > limit:
            data, dropped = data[-limit:], True
        text = data.decode("utf-8", "replace")
        if dropped:
            text = text.partition("\n")[2]
        if not self.secrets:
            return text
        return mask_cut_end(mask_token(text, self.secrets), self.secrets)

    def shows_secret(self) -> bool:
        """Whether a secret appears in what the command wrote (the kept output), in any
        form :func:`~pytest_osfoundry.client.mask_token` knows (raw, quoted, encoded)."""
        with self._lock:
            text = b"".join(self._kept).decode("utf-8", "replace")
        return bool(self.secrets) and mask_token(text, self.secrets) != text

    def output_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the command wrote, tokens masked."""
        return "\n".join(self.output_text(16_384).splitlines()[-lines:])

    def close(self) -> None:
        """Stop the process (if running) and drop its kept output."""
        self.stop()
        with self._lock:
            self._kept.clear()
            self._kept_bytes = 0


class CommandStarts:
    """One check's starts of its command, in order (see the module): each in pytest's
    working directory, named ``what`` in an error, ``secrets`` masked in its output,
    ``unset`` left out of its environment unless given."""

    def __init__(
        self, *, what: str, secrets: Sequence[str] = (), unset: Sequence[str] = ()
    ) -> None:
        self.what = what
        self.secrets = list(secrets)
        self.unset = tuple(unset)
        self.processes: list[CommandProcess] = []
        """Every start, oldest first."""

    def start(self, argv: Sequence[str], env: Mapping[str, str]) -> CommandProcess:
        """Start the command once more (the latest start from now on).

        Raises:
            CommandError: it is not found, not executable, or cannot be started.
        """
        process = CommandProcess(
            argv, env, what=self.what, cwd=os.getcwd(), secrets=self.secrets, unset=self.unset
        )
        self.processes.append(process)
        return process

    @property
    def latest(self) -> CommandProcess | None:
        """The latest start (``None`` before the first)."""
        return self.processes[-1] if self.processes else None

    def stop(self) -> int:
        """Stop the latest start (SIGTERM, SIGKILL 5 s later); its exit status."""
        return self._latest().stop()

    def kill(self) -> int:
        """SIGKILL the latest start's process group (a crash); its exit status."""
        return self._latest().kill()

    def _latest(self) -> CommandProcess:
        if not self.processes:
            raise RuntimeError(f"{self.what} was never started")
        return self.processes[-1]

    def output_tail(self) -> str:
        """The latest start's last lines of output (tokens masked; '' before the first)."""
        return self.processes[-1].output_tail() if self.processes else ""

    def output_texts(self) -> list[str]:
        """What each start wrote, in start order (each bounded, its last bytes; tokens
        masked)."""
        return [process.output_text() for process in self.processes]

    def close(self) -> None:
        """Stop every start still running and drop their kept output."""
        for process in self.processes:
            process.close()


def kill_all() -> None:
    """SIGKILL every command's process group still running (interpreter exit, Ctrl-C)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        process.kill()


atexit.register(kill_all)
