"""An outside command under test as a child process: started, watched, stopped, never
orphaned. The relay suite runs its relay through it (and the agent suite, an agent).

:func:`split_command` splits ``CMD`` as a POSIX shell would (:func:`shlex.split`, no
shell; a suite's ``embedded`` names the kit's own program). :class:`CommandProcess`
starts it in pytest's working directory, with the suite's contract environment, in a
process group of its own. :meth:`CommandProcess.stop` sends SIGTERM to the group and
SIGKILL 5 s later; :meth:`CommandProcess.kill` sends SIGKILL at once. stderr goes to a
file: :meth:`CommandProcess.stderr_tail` gives its last lines, :meth:`CommandProcess.stderr_text`
its text (bounded), tokens masked.
:class:`CommandStarts` is one check's starts of its command: the latest stopped or
killed on demand, what each start wrote to stderr, every one closed with the check.
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
import tempfile
import threading
from collections.abc import Mapping, Sequence

from pytest_osfoundry.client import mask_token

__all__ = [
    "EMBEDDED_COMMAND",
    "CommandError",
    "CommandProcess",
    "CommandStarts",
    "kill_all",
    "split_command",
]

EMBEDDED_COMMAND = "embedded"
STOP_GRACE_SECONDS = 5.0
STDERR_KEPT = 262_144
"""The most of a command's stderr (its last bytes) a check keeps for its report."""

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
    (``"the relay command"``); ``secrets`` are masked in its stderr.

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
    ) -> None:
        self.argv = list(argv)
        self.secrets = [s for s in secrets if s]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open for the process life
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
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                start_new_session=True,
            )
        except FileNotFoundError:
            self._stderr.close()
            raise CommandError(f"{what} was not found: {self.argv[0]}") from None
        except PermissionError:
            self._stderr.close()
            raise CommandError(f"{what} is not executable: {self.argv[0]}") from None
        except OSError as err:
            self._stderr.close()
            raise CommandError(f"{what} cannot be started: {err}") from None
        with _LIVE_LOCK:
            _LIVE.add(self)

    @property
    def pid(self) -> int:
        """The process id (also its group id)."""
        return self.popen.pid

    def exited(self) -> int | None:
        """The exit status if the process has ended, else ``None``."""
        return self.popen.poll()

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> int:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds; the exit status.

        Children left in the group are killed as well.
        """
        if self.popen.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait()
        self._signal_group(signal.SIGKILL)  # no child outlives its command
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

    def stderr_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the command wrote to stderr, tokens masked."""
        return "\n".join(self.stderr_text(16_384).splitlines()[-lines:])

    def stderr_text(self, limit: int = STDERR_KEPT) -> str:
        """What the command wrote to stderr, its last ``limit`` bytes at most, tokens masked
        ('' once the file is closed)."""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - limit))
            data = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        if size > limit:
            data = data.partition("\n")[2]  # the first line read is cut: leave it out
        return mask_token(data, self.secrets) if self.secrets else data

    def close(self) -> None:
        """Stop the process (if running) and drop its stderr file."""
        self.stop()
        self._stderr.close()


class CommandStarts:
    """One check's starts of its command, in order (see the module): each in pytest's
    working directory, named ``what`` in an error, ``secrets`` masked in its stderr,
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

    def stderr_tail(self) -> str:
        """The latest start's last stderr lines (tokens masked; '' before the first)."""
        return self.processes[-1].stderr_tail() if self.processes else ""

    def stderr_texts(self) -> list[str]:
        """What each start wrote to stderr, in start order (each bounded, its last bytes;
        tokens masked)."""
        return [process.stderr_text() for process in self.processes]

    def close(self) -> None:
        """Stop every start still running and drop their stderr files."""
        for process in self.processes:
            process.close()


def kill_all() -> None:
    """SIGKILL every command's process group still running (interpreter exit, Ctrl-C)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        process.kill()


atexit.register(kill_all)
