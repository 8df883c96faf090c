"""The reference server broken on purpose, as load targets the accounting must catch.

* :class:`IgnoresKeys` — every ``run_graph_session`` gets a fresh idempotency key on
  its way in, so a retry after a lost reply queues a second run (R5 broken).
* :class:`LosesCompletions` — the first completion POST and every third after it are
  answered ``200`` and dropped, so their runs stay ``running`` for ever (D17's promise
  broken by the server); the first, so that a short run that completes anything loses
  something.
* :class:`RevokesThenDies` — accepts each of two chosen tokens once (the load's
  preflight), then refuses it (401): account 0's desktop token at every later relay
  call, account 1's first agent token at every later tool call; once each was refused
  it stops answering (its port closed: connections refused).

:func:`serving` serves one on loopback with ``accounts`` load accounts and writes the
accounts file for ``osfoundry-load --target``.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_osfoundry._cli import provision_accounts
from pytest_osfoundry._vocabulary import RELAY_COMMANDS, RELAY_PREFIX
from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.http import Handler, HandlerWrapper, Request, Response, json_response
from pytest_osfoundry.load import Target, write_target
from pytest_osfoundry.server import LoopbackServer, ReferenceServer


class IgnoresKeys(HandlerWrapper[Handler]):
    """Replaces the idempotency key of every ``run_graph_session`` with a fresh one."""

    def __call__(self, request: Request, /) -> Response:
        if request.method == "POST" and b'"run_graph_session"' in request.body:
            message = json.loads(request.body)
            args = message.get("params", {}).get("arguments", {})
            if isinstance(args, dict) and "idempotency_key" in args:
                args["idempotency_key"] = secrets.token_hex(16)
                request = request._replace(body=json.dumps(message).encode())
        return self.inner(request)


class LosesCompletions(HandlerWrapper[Handler]):
    """Answers the first completion, and every third after it, ``200`` unrecorded."""

    def __init__(self, inner: Handler) -> None:
        super().__init__(inner)
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        self.dropped: list[str] = []

    def __call__(self, request: Request, /) -> Response:
        if request.method == "POST" and request.path.startswith(RELAY_COMMANDS) \
                and request.path.endswith("/complete"):
            with self._lock:
                drop = next(self._count) % 3 == 1
            if drop:
                self.dropped.append(request.path.split("/")[-2])
                status = json.loads(request.body).get("status", "completed")
                return json_response(200, {"status": status})
        return self.inner(request)


class RevokesThenDies(HandlerWrapper[Handler]):
    """Refuses two tokens after their first use, then stops answering (see the module)."""

    def __init__(self, inner: Handler) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self._uses: dict[str, int] = {}
        self.revoked: set[str] = set()
        self.refused: dict[str, int] = {}
        self.loop: LoopbackServer | None = None

    def __call__(self, request: Request, /) -> Response:
        auth = request.header("authorization") or ""
        token = auth.removeprefix("Bearer ")
        counted = (request.path.startswith(RELAY_PREFIX)
                   or b'"tools/call"' in request.body)
        with self._lock:
            if token in self.revoked and counted:
                self._uses[token] = self._uses.get(token, 0) + 1
                if self._uses[token] > 1:
                    self.refused[token] = self.refused.get(token, 0) + 1
                    if len(self.refused) == len(self.revoked) and self.loop is not None:
                        # A second later: the refusal just made reaches its client first.
                        threading.Timer(1.0, self.loop.close).start()
                        self.loop = None
                    return json_response(401, {"error": "invalid_token"})
        return self.inner(request)


VARIANTS = {"ignores-keys": IgnoresKeys, "loses-completions": LosesCompletions,
            "revokes-then-dies": RevokesThenDies}


@contextmanager
def serving(variant: str, accounts_file: Path, *, accounts: int,
            agents: int) -> Iterator[HandlerWrapper[Handler]]:
    """Serve ``variant`` on loopback; write its accounts to ``accounts_file``."""
    server = ReferenceServer(RealClock())
    made = provision_accounts(server, accounts, agents)
    handler = VARIANTS[variant](server)
    loop = LoopbackServer(handler, workers=8)
    if isinstance(handler, RevokesThenDies):
        handler.loop = loop
        handler.revoked = {made[0].desktop_token, made[1].agent_tokens[0]}
    try:
        write_target(accounts_file, Target(loop.origin + "/mcp", loop.origin, tuple(made)))
        yield handler
    finally:
        loop.close()
