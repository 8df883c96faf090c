"""The agent suite's preflight: is the agent command usable at all, before any check.

One agent is started with a plain ``run`` task and watched until its first
``tools/call`` reaches the server, for up to :func:`preflight_seconds` (five
intervals, at least 3 s: 10 s at the default interval). Each way it can be
unusable is one message (the plugin prints it as one ``ERROR:`` line and exits 4, the
reports written all the same), followed by the agent's last lines of output with the
token masked:

* the command is not found (or cannot be started);
* it exits before its first tool call;
* it makes no tool call within the limit (it hangs, or talks to another URL or with
  another token than the contract's).

The agent is then stopped (SIGTERM, SIGKILL 5 s later): the preflight judges nothing
else.
"""

from __future__ import annotations

from pytest_osfoundry.conformance.agent._harness import AgentSuite
from pytest_osfoundry.conformance.command._internal import CommandError, first_sign

__all__ = ["AgentPreflightError", "agent_preflight", "preflight_seconds"]


def preflight_seconds(interval: float) -> float:
    """How long the preflight waits for the first tool call: 5 intervals, at least 3 s."""
    return max(3.0, 5.0 * interval)


class AgentPreflightError(Exception):
    """The agent command cannot be checked; the message names the problem."""


def agent_preflight(suite: AgentSuite, *, ready_seconds: float | None = None) -> None:
    """Start the agent once and wait for its first tool call (for ``ready_seconds``,
    by default :func:`preflight_seconds`); raise on a problem."""
    if ready_seconds is None:
        ready_seconds = preflight_seconds(suite.interval)
    conf = suite.context("preflight")
    try:
        session = conf.session()
        task = {"kind": "run", "graph_session_id": session["graph_session_id"], "arguments": {}}
        try:
            process = conf.launch(task, deadline=conf.deadline())
        except CommandError as err:
            raise AgentPreflightError(str(err)) from None

        def called() -> bool:
            return any(call.rpc == "tools/call" for call in conf.calls())

        problem = first_sign(
            process,
            called,
            seconds=ready_seconds,
            exited=lambda status: (
                f"the agent command exited (status {status}) before its first tool call"
            ),
            late=(
                f"the agent made no tool call within {ready_seconds:g} s of its start "
                "(it must call the tools at OSF_AGENT_MCP_URL with OSF_AGENT_TOKEN)"
            ),
            tail="the agent's last lines of output",
            pause=lambda: conf.wait(called, 0.05),
        )
        if problem is not None:
            raise AgentPreflightError(problem)
    finally:
        conf.close()
