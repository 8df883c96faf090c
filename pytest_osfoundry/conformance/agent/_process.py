"""The agent command: how ``CMD`` is split and started.

The running itself is the relay suite's too
(:class:`~pytest_osfoundry.conformance.command._process.CommandProcess`: no shell, a
process group of its own, SIGTERM then SIGKILL 5 s later, every descendant gone,
:func:`kill_all` on Ctrl-C). An agent's stdout and stderr are kept together, their
last :data:`OUTPUT_KEPT` bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_osfoundry.conformance.command._internal import (
    OUTPUT_KEPT,
    STOP_GRACE_SECONDS,
    CommandError,
    CommandProcess,
    kill_all,
    split_command,
)

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
AGENT_COMMAND = "the agent command"
"""How an error names the agent command (``--osf-agent-command``)."""

AgentCommandError = CommandError
"""The agent command cannot be split or started (the message says why)."""


def split_agent_command(command: str) -> list[str]:
    """``CMD`` as argv: ``embedded`` is the kit's own agent under this interpreter.

    Raises:
        CommandError: ``CMD`` cannot be split as a shell would, or is empty.
    """
    return split_command(command, what=AGENT_COMMAND, embedded_module="pytest_osfoundry.agent")


class AgentProcess(CommandProcess):
    """One run of the agent command, its stdout and stderr kept together; ``secrets``
    masked in its output; ``unset`` left out of its environment unless ``env`` gives it."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | None = None,
        secrets: Sequence[str] = (),
        unset: Sequence[str] = (),
    ) -> None:
        super().__init__(
            argv, env, what=AGENT_COMMAND, cwd=cwd, secrets=secrets, unset=unset, stdout=True
        )
