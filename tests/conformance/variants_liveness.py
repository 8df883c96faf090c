"""Servers that hang on one tool: the suite must tell them from a target that is gone.

Factories for ``--osf-target=embedded:tests.conformance.variants_liveness:NAME``.
:func:`hangs_on_cancel` answers everything at once except ``tools/call
cancel_graph_run``, which it holds for :data:`HANG` seconds before answering; run with
``--osf-timeout`` below that, every request to that tool gets no answer in time.
The hold is bounded (not forever) so the embedded server's worker threads are free
again before a liveness probe queued behind them would run out of time, the way an
asynchronous server's would never be taken.
"""

from __future__ import annotations

import threading

from pytest_osfoundry.http import Request, Response
from tests.conformance.osf_variant_kit import Wrapped, tool_call

__all__ = ["HANG", "TIMEOUT", "hangs_on_cancel"]

TIMEOUT = 2
"""The ``--osf-timeout`` the tests run these servers with."""
HANG = 3.0
"""How long a held request waits before it is answered (more than :data:`TIMEOUT`,
less than twice it)."""


class _HangsOn(Wrapped):
    def __init__(self, tool: str) -> None:
        super().__init__()
        self.tool = tool
        self._never = threading.Event()

    def __call__(self, request: Request, /) -> Response:
        call = tool_call(request)
        if call is not None and call[0] == self.tool:
            self._never.wait(HANG)  # outside the wrapper's lock: only this request waits
        return super().__call__(request)


def hangs_on_cancel() -> Wrapped:
    """``cancel_graph_run`` answers only after :data:`HANG` seconds; the rest at once."""
    return _HangsOn("cancel_graph_run")
