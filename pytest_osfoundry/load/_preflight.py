"""The preflight: before any user starts, each URL answers and each token is accepted
in its role, or the load ends in seconds naming why (exit status 2).

The master runs it on the credentials the run will use (the desktops' owners, the
agent tokens the handout gives), through the clients the users run:

* **a desktop token**: the relay sync (D10) of its project with the sessions the
  load's desktop of that account shares (:func:`desktop_sessions`) -- the very change
  that desktop makes at its first pass, and nothing more: a sync takes no command
  (a queued command stays queued and is delivered again by the next sync). It proves
  the relay URL, its path, the token and its role (an agent's token is refused, 403)
  and that the project is the token's owner's.
* **an agent token**: ``list_graph_sessions`` on its project: a tool call that needs
  a token (R2) and changes nothing. It proves the MCP URL, the token, its role (a
  desktop's token is refused) and its project.

First the first desktop and the first agent alone: a URL that does not answer
(refused, reset, no answer in time) or is not found (404) ends the preflight at once,
naming the URL's field; then every credential, at once (``mapper``). Each refusal is
named by account and role and the answer that refused it. Nothing here prints a
token; URLs are shown masked (no user information, no token-like query value).

Locust-free: the master hands it a gevent pool's ``imap_unordered``; a test may call
it in any process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._masking import mask_url
from pytest_osfoundry.client import (
    HttpStatusError,
    JsonRpcError,
    McpClient,
    OsfClientError,
    RelayClient,
    ReplyLost,
    ToolError,
    Transport,
)
from pytest_osfoundry.engine import make_sessions
from pytest_osfoundry.load._accounts import Target
from pytest_osfoundry.relay._internal import session_dict

__all__ = ["SESSIONS", "Check", "PreflightFailed", "checks_of", "desktop_sessions", "preflight",
           "unreachable"]

#: Sessions each load desktop shares.
SESSIONS = 3
#: Refusals the preflight's message names one by one (the rest are counted).
NAMED = 5

Mapper = Callable[[Callable[["Check"], "str | None"], Iterable["Check"]], Iterator["str | None"]]


class PreflightFailed(Exception):
    """A URL or a credential of the target that the load cannot use; the message says
    which and why, never a token."""


def desktop_sessions(account: int) -> list[dict[str, Any]]:
    """The sessions the load's desktop of account ``account`` shares (and the preflight
    syncs): the same ones for the same account, in every process."""
    return [session_dict(s) for s in make_sessions(SESSIONS, seed=account)]


@dataclass(frozen=True)
class Check:
    """One credential to try: account ``account``'s desktop token (``agent`` None) or
    its agent token number ``agent``."""

    account: int
    agent: int | None = None

    @property
    def who(self) -> str:
        """The credential, as a message names it."""
        if self.agent is None:
            return f"account {self.account}'s desktop token"
        return f"account {self.account}'s agent token {self.agent}"


#: The end of the message of a desktop's sync answered 404.
_NOT_FOUND = "the project is not the token's owner's"


class _Unreachable(Exception):
    """A URL that does not answer or is not found: no credential can be tried on it."""


def checks_of(desktops: int, agents: Sequence[tuple[int, int]]) -> list[Check]:
    """The credentials a run uses: the first ``desktops`` accounts' desktop tokens and
    the distinct ``(account, agent token)`` pairs handed to its agents."""
    made = [Check(a) for a in range(desktops)]
    made += [Check(a, t) for a, t in dict.fromkeys(agents)]
    return made


def preflight(
    target: Target,
    checks: Sequence[Check],
    transport: Callable[[], Transport],
    *,
    mapper: Mapper | None = None,
) -> None:
    """Try every credential of ``checks`` on ``target``; :class:`PreflightFailed` naming
    each URL or credential that cannot be used (see the module docstring).

    ``transport()`` makes the wire transport of one check.
    """
    run_map: Mapper = mapper if mapper is not None else map

    def one(check: Check) -> str | None:
        try:
            return _check(target, check, transport())
        except _Unreachable as err:
            return str(err)

    firsts = [next((c for c in checks if c.agent is None), None),
              next((c for c in checks if c.agent is not None), None)]
    problems: list[str] = []
    for check in firsts:
        if check is None:
            continue
        try:
            problem = _check(target, check, transport())
        except _Unreachable as err:
            raise PreflightFailed(str(err)) from None
        if problem is not None:
            if problem.endswith(_NOT_FOUND):
                raise PreflightFailed(problem)  # a wrong path: every account would say so
            problems.append(problem)
    rest = [c for c in checks if c not in firsts]
    problems = sorted(problems + [p for p in run_map(one, rest) if p is not None])
    if problems:
        named = problems[:NAMED]
        more = f"; and {len(problems) - len(named)} more" if len(problems) > len(named) else ""
        raise PreflightFailed(
            f"{len(problems)} of the {len(checks)} credentials the run uses cannot be used: "
            + "; ".join(named) + more
        )


def unreachable(target: Target, transport: Callable[[], Transport]) -> str | None:
    """Why the target's MCP URL gives no answer now (refused, reset, no answer in time),
    or ``None`` when it answers anything (the end of a load asks this once)."""
    acc = target.accounts[0]
    token = acc.agent_tokens[0]
    try:
        McpClient(transport(), target.mcp_url, token).list_graph_sessions(acc.project_id)
    except ReplyLost as err:
        return _cause(str(err), token)
    except OsfClientError:
        return None
    return None


def _check(target: Target, check: Check, wire: Transport) -> str | None:
    """Why ``check``'s credential cannot be used, or ``None``; :class:`_Unreachable`
    when its URL does not answer or is not found."""
    acc = target.accounts[check.account]
    if check.agent is None:
        field, url, what = "relay_url", target.relay_url, "the relay sync"
        token = acc.desktop_token
    else:
        field, url, what = "mcp_url", target.mcp_url, "list_graph_sessions"
        token = acc.agent_tokens[check.agent]
    shown = mask_url(url, (token,))
    try:
        if check.agent is None:
            RelayClient(wire, url, token).sync(acc.project_id, desktop_sessions(check.account))
        else:
            McpClient(wire, url, token).list_graph_sessions(acc.project_id)
    except ReplyLost as err:
        cause = _cause(str(err), token)
        raise _Unreachable(f"the {field} ({shown}) does not answer: {cause}") from None
    except HttpStatusError as err:
        if err.status == 404:
            if check.agent is None:
                # A wrong path, or a project that is not the token's owner's (R13).
                return (f"{check.who}: {what} of its project answered 404: the relay_url "
                        f"({shown}) has a wrong path, or {_NOT_FOUND}")
            raise _Unreachable(
                f"the {field} ({shown}) answered 404 (not found): is its path right?"
            ) from None
        if err.status in (401, 403):
            role = "a desktop's" if check.agent is None else "an agent's"
            return (f"{check.who} refused ({err.status}) by {what}: unknown, expired, or not "
                    f"{role} token")
        return f"{check.who}: {what} answered HTTP {err.status}"
    except ToolError as err:
        return (f"{check.who}: {what} of its project answered a tool error: "
                f"{_cause(err.message, token)}")
    except JsonRpcError as err:
        return f"{check.who}: {what} answered JSON-RPC error {err.code}"
    except OsfClientError as err:
        return f"{check.who}: {what}: {_cause(str(err), token)}"
    return None


def _cause(text: str, token: str) -> str:
    """A client error's text as the preflight shows it: one line, no token."""
    return " ".join(mask_url(text, (token,)).split())[:300]
