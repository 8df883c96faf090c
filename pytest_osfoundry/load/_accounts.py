"""The load's target: a file of accounts on any osFoundry server, and who gets which.

An accounts file is JSON::

    {"mcp_url": "http://127.0.0.1:8000/mcp",
     "relay_url": "http://127.0.0.1:8000",
     "accounts": [{"project_id": "proj_...", "desktop_token": "...",
                   "agent_tokens": ["...", "..."]}, ...]}

Each account is one owner: one project, the token of its one desktop, and the tokens
of agents connected to that project with ``osfoundry:read osfoundry:run``.
``osfoundry-fake serve --accounts N`` writes one (mode 0600); for another server, a
team writes its own.

:class:`Handout` is how the master hands them out: **one desktop per owner** (two
relays on one owner would both run every command), and agents only of accounts whose
desktop was handed out, spread over their agent tokens in turn. Nothing here prints a
token: errors name the file and the entry, never its secrets.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from pytest_osfoundry._masking import MIN_SECRET

__all__ = ["Account", "AccountsError", "Handout", "Target", "read_target", "write_target"]


class AccountsError(ValueError):
    """An accounts file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Account:
    """One owner: its project, its desktop's token and its agents' tokens."""

    project_id: str
    desktop_token: str = field(repr=False)
    agent_tokens: tuple[str, ...] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The account as the file holds it."""
        return {
            "project_id": self.project_id,
            "desktop_token": self.desktop_token,
            "agent_tokens": list(self.agent_tokens),
        }


@dataclass(frozen=True)
class Target:
    """A server to load: its MCP URL, its relay API's base URL, its accounts."""

    mcp_url: str
    relay_url: str
    accounts: tuple[Account, ...]

    def to_dict(self) -> dict[str, Any]:
        """The target as the file holds it."""
        return {
            "mcp_url": self.mcp_url,
            "relay_url": self.relay_url,
            "accounts": [a.to_dict() for a in self.accounts],
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "the accounts") -> Target:
        """A checked target from parsed JSON; :class:`AccountsError` naming what is wrong."""
        if not isinstance(data, dict):
            raise AccountsError(f"{where}: expected a JSON object, got {type(data).__name__}")
        urls: dict[str, str] = {}
        for name in ("mcp_url", "relay_url"):
            urls[name] = _url(data.get(name), f"{where}: {name}")
        raw = data.get("accounts")
        if not isinstance(raw, list) or not raw:
            raise AccountsError(f"{where}: accounts must be a non-empty list")
        accounts: list[Account] = []
        projects: set[str] = set()
        desktops: set[str] = set()
        for index, entry in enumerate(raw):
            at = f"{where}: accounts[{index}]"
            if not isinstance(entry, dict):
                raise AccountsError(f"{at}: expected an object")
            project = entry.get("project_id")
            desktop = entry.get("desktop_token")
            agents = entry.get("agent_tokens")
            if not isinstance(project, str) or not project:
                raise AccountsError(f"{at}: project_id must be a non-empty string")
            if not isinstance(desktop, str) or not desktop:
                raise AccountsError(f"{at}: desktop_token must be a non-empty string")
            if (
                not isinstance(agents, list)
                or not agents
                or not all(isinstance(t, str) and t for t in agents)
            ):
                raise AccountsError(f"{at}: agent_tokens must be a non-empty list of strings")
            _check_token(desktop, f"{at}: desktop_token")
            for number, token in enumerate(agents):
                _check_token(token, f"{at}: agent_tokens[{number}]")
            if project in projects:
                raise AccountsError(f"{at}: project {project!r} is listed twice")
            if desktop in desktops:
                # One desktop per owner: two relays on one token would both run every command.
                raise AccountsError(f"{at}: its desktop_token is another account's too")
            projects.add(project)
            desktops.add(desktop)
            accounts.append(Account(project, desktop, tuple(agents)))
        for name, url in urls.items():
            if any(_holds(url, token) for acc in accounts
                   for token in (acc.desktop_token, *acc.agent_tokens)):
                # A URL is printed in errors and logs; a token is never.
                raise AccountsError(
                    f"{where}: {name} holds one of the accounts' tokens: a token goes in its "
                    "token field only (a URL is printed, a token never is)"
                )
        return cls(urls["mcp_url"], urls["relay_url"], tuple(accounts))


def _url(value: object, at: str) -> str:
    """``value`` if it is an http(s) URL; :class:`AccountsError` naming ``at`` otherwise.

    The message never repeats the value: a field that should hold a URL may hold a
    token put there by mistake.
    """
    if not isinstance(value, str):
        raise AccountsError(f"{at} must be an http(s) URL, got {type(value).__name__}")
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise AccountsError(
            f"{at} must be an http(s) URL (scheme://host[:port]/path), got a string of "
            f"{len(value)} characters that is not one"
        )
    if any(not 0x21 <= ord(c) <= 0x7E for c in value):
        raise AccountsError(f"{at} holds a space, a control character or a non-ASCII one")
    return value


def _check_token(token: str, at: str) -> None:
    """Refuse a token an ``Authorization`` header cannot carry, never echoing it.

    A bearer token is visible ASCII (RFC 6750's token68 and every real token format):
    a CR, LF, space, other control character or non-ASCII character would be refused
    by the HTTP layer on every request, or split the header.
    """
    if any(not 0x21 <= ord(c) <= 0x7E for c in token):
        raise AccountsError(
            f"{at} holds a character an HTTP header cannot carry (a CR, LF, space, other "
            "control character or non-ASCII character): a bearer token is visible ASCII"
        )


def _holds(url: str, token: str) -> bool:
    """Whether ``token`` appears in ``url``, as written or percent-encoded (a token of
    fewer than ``MIN_SECRET`` characters is too short to tell from a URL's own text)."""
    if len(token) < MIN_SECRET:
        return False
    return token in url or quote(token, safe="") in url


def read_target(path: str | os.PathLike[str]) -> Target:
    """The target in the accounts file at ``path``; :class:`AccountsError` if unusable."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise AccountsError(f"{where}: cannot read it ({err.strerror or err})") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise AccountsError(f"{where}: not JSON ({err})") from None
    return Target.from_dict(data, where)


def write_target(path: str | os.PathLike[str], target: Target) -> None:
    """Write ``target`` to ``path``, readable by its owner only (0600) from the first byte.

    It is written to a new file beside ``path`` (created exclusively, mode 0600), then
    renamed into place: a reader sees the old file or the whole new one, and a link
    at ``path`` (a symbolic link, dangling or not, or a hard link) is replaced, never
    followed, so whatever it pointed at is left as it was. Raises ``OSError`` (nothing
    left behind) when the folder cannot take the file.
    """
    where = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(where))
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(target.to_dict(), out, indent=1)
            out.write("\n")
        os.replace(temporary, where)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class Handout:
    """Hands out a target's accounts: one desktop per owner, agents in turn.

    ``desktops`` is how many accounts get a desktop (the first ones; at most all).
    :meth:`desktop` gives each account once; :meth:`agent` cycles over the agent
    tokens of those accounts (account by account, then the next token of each), so
    agents spread over owners before two agents share one token.
    """

    def __init__(self, target: Target, desktops: int) -> None:
        if not 1 <= desktops <= len(target.accounts):
            raise AccountsError(
                f"--desktops must be between 1 and the {len(target.accounts)} accounts "
                f"of the target (one desktop per owner), got {desktops}"
            )
        self.target = target
        self.desktops = desktops
        self._next_desktop = 0
        self._agents = [
            (a, t)
            for t in range(max(len(acc.agent_tokens) for acc in target.accounts[:desktops]))
            for a, acc in enumerate(target.accounts[:desktops])
            if t < len(acc.agent_tokens)
        ]
        self._next_agent = 0

    def desktop(self) -> int | None:
        """The next account without a desktop (its index), or ``None`` when none is left."""
        if self._next_desktop >= self.desktops:
            return None
        index = self._next_desktop
        self._next_desktop += 1
        return index

    def agents_of(self, count: int) -> list[tuple[int, int]]:
        """The distinct ``(account, agent token)`` pairs the first ``count`` calls of
        :meth:`agent` give (the credentials a run of ``count`` agents uses)."""
        return list(dict.fromkeys(self._agents[i % len(self._agents)]
                                  for i in range(min(count, len(self._agents)))))

    def agent(self) -> tuple[int, int]:
        """The next ``(account index, agent token index)``, cycling."""
        pair = self._agents[self._next_agent % len(self._agents)]
        self._next_agent += 1
        return pair
