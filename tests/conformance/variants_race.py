"""Broken servers that only misbehave under simultaneous requests (SPEC R5, R11).

:data:`RACES` lists them with the checks each must fail (and no other);
``--osf-target=embedded:tests.conformance.variants_race:racy_keys`` runs the suite
against the first.

``racy_keys`` wraps the reference server's HTTP app and keeps its own table of
idempotency keys in front of it: a ``run_graph_session`` call looks its key up,
and when the key is new, does the work (here: a pause of :data:`GAP` seconds
standing in for a database round trip) before inserting it -- the most common real
bug of idempotency keys. Calls one after another behave (a retry finds the key,
a retry with other arguments is refused), so only the concurrent check
``R5-concurrent-same-key`` catches it; the pause makes it caught every time, not
by luck. ``racy_completions`` refuses a completion while another one for the same
command is being stored (``R11-concurrent-same-completion``).
"""

from __future__ import annotations

import json
import secrets
import string
import threading
import time
from typing import Any

from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._auth import bearer_token

__all__ = [
    "FAILS",
    "GAP",
    "RACES",
    "RacyCompletions",
    "RacyKeys",
    "racy_completions",
    "racy_keys",
    "run_call",
]

GAP = 0.25
"""Seconds between a key's look-up and its insert."""

FAILS = frozenset({"R5-concurrent-same-key"})
"""The checks ``racy_keys`` must fail (and no other)."""

_ALPHABET = string.ascii_letters + string.digits


def run_call(request: Request) -> dict[str, Any] | None:
    """The arguments of a ``tools/call run_graph_session`` request with a usable key."""
    try:
        message = json.loads(request.body)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict) or params.get("name") != "run_graph_session":
        return None
    args = params.get("arguments")
    key = args.get("idempotency_key") if isinstance(args, dict) else None
    if not isinstance(key, str) or not 8 <= len(key) <= 128:
        return None  # the reference server refuses it as it is
    return message if isinstance(message, dict) else None


class RacyKeys(HandlerWrapper[ReferenceServer]):
    """The reference server behind a key table whose look-up and insert are apart."""

    def __init__(self, gap: float = GAP) -> None:
        super().__init__(ReferenceServer())
        self.mcp_path = self.inner.mcp_path
        self.gap = gap
        self._table: dict[tuple[str | None, str], str] = {}
        self._lock = threading.Lock()

    def provision(self) -> Any:
        """The reference server's credentials."""
        return self.inner.provision()

    def __call__(self, request: Request, /) -> Response:
        message = run_call(request)
        if message is None:
            return self.inner(request)
        args = message["params"]["arguments"]
        entry = (bearer_token(request.headers.get("authorization")), args["idempotency_key"])
        with self._lock:
            stored = self._table.get(entry)
        if stored is None:
            time.sleep(self.gap)  # the work between look-up and insert
            stored = "".join(secrets.choice(_ALPHABET) for _ in entry[1])
            with self._lock:
                self._table[entry] = stored
        args["idempotency_key"] = stored
        body = json.dumps(message).encode()
        return self.inner(
            Request(request.method, request.path, request.headers, body, request.query)
        )


def racy_keys() -> RacyKeys:
    """Simultaneous retries with one key queue one run each."""
    return RacyKeys()


class RacyCompletions(HandlerWrapper[ReferenceServer]):
    """The reference server behind a completion handler that refuses concurrent writers.

    A completion arriving while another one for the same command is being stored is
    answered 409, as a server taking a row lock with ``NOWAIT`` would: the same body
    posted again later (outbox redelivery) is still a 200, so only simultaneous
    identical completions reveal it.
    """

    def __init__(self, gap: float = GAP) -> None:
        super().__init__(ReferenceServer())
        self.mcp_path = self.inner.mcp_path
        self.gap = gap
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def provision(self) -> Any:
        """The reference server's credentials."""
        return self.inner.provision()

    def __call__(self, request: Request, /) -> Response:
        if request.method != "POST" or not request.path.endswith("/complete"):
            return self.inner(request)
        with self._lock:
            if request.path in self._busy:
                body = b'{"error":"another completion is being stored"}'
                return Response(409, {"content-type": "application/json"}, body)
            self._busy.add(request.path)
        try:
            time.sleep(self.gap)  # storing the completion
            return self.inner(request)
        finally:
            with self._lock:
                self._busy.discard(request.path)


def racy_completions() -> RacyCompletions:
    """Simultaneous identical completions: one stored, the others refused with 409."""
    return RacyCompletions()


RACES = {
    "racy_keys": FAILS,
    "racy_completions": frozenset({"R11-concurrent-same-completion"}),
}
"""Each variant here by factory name, with the checks it must fail (and no other)."""
