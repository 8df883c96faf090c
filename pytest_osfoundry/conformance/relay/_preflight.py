"""The relay suite's preflight: is the relay command usable at all, before any check.

One relay is started against a scenario of its own and watched for up to 15 s.
Each way it can be unusable is one message (the plugin prints it as one ``ERROR:``
line and exits 4), followed by the relay's last stderr lines with the token masked:

* the command is not found (or cannot be started);
* it exits before its first sync;
* it sends relay requests with a token other than ``OSF_DESKTOP_TOKEN``;
* it never syncs within 15 s.
"""

from __future__ import annotations

from pytest_osfoundry.conformance.command._internal import CommandError, first_sign
from pytest_osfoundry.conformance.relay._harness import READY_SECONDS, RelaySuite

__all__ = ["RelayPreflightError", "relay_preflight"]


class RelayPreflightError(Exception):
    """The relay command cannot be checked; the message names the problem."""


def relay_preflight(suite: RelaySuite, *, ready_seconds: float = READY_SECONDS) -> None:
    """Start the relay once and wait for its first answered sync; raise on a problem."""
    conf = suite.context("preflight")
    try:
        conf.share(1)
        # Counted before the spawn: a relay may send its first requests before this
        # thread runs again (a loaded machine), and those count too.
        strangers_before = len(suite.server.strangers)
        try:
            process = conf.start(ready=False)
        except CommandError as err:
            raise RelayPreflightError(str(err)) from None
        problem = first_sign(
            process,
            lambda: any(r.action == "sync" and r.status == 200 for r in conf.requests()),
            seconds=ready_seconds,
            exited=lambda status: (
                f"the relay command exited (status {status}) before its first sync"
            ),
            wrong=lambda: _strangers(suite, strangers_before),
            late=f"the relay never synced within {ready_seconds:g} s of its start",
            tail="the relay's last stderr lines",
        )
        if problem is not None:
            raise RelayPreflightError(problem)
    finally:
        conf.close()


def _strangers(suite: RelaySuite, before: int) -> str | None:
    if len(suite.server.strangers) > before:
        return (
            "the relay sent relay requests with a token that is not OSF_DESKTOP_TOKEN "
            "(wrong token: read the token from the environment)"
        )
    return None
