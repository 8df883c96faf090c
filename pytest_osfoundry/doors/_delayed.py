"""Added latency: any handler answering as if it were far away.

``Delayed(handler, seconds)`` answers every request like ``handler`` after waiting
``seconds`` in the thread serving it. Behind the loopback door
(:class:`~pytest_osfoundry.server.LoopbackServer`, whose worker threads run the
handler) the wait blocks only that request's worker, so a suite running checks
concurrently sees what it would see against a server a round trip away, as long as
fewer requests are in flight than the door has workers. ``osfoundry-fake serve --latency
SECONDS`` serves the reference server this way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry._checks import ArgumentTypeError, is_number
from pytest_osfoundry.http import Handler, HandlerWrapper, Request, Response

__all__ = ["MAX_LATENCY", "Delayed", "check_latency"]

MAX_LATENCY = 60.0
"""The longest delay accepted, in seconds."""


def check_latency(seconds: float) -> float:
    """``seconds`` as a delay, validated.

    Raises:
        ValueError: not a finite number between 0 and :data:`MAX_LATENCY`.
    """
    if not is_number(seconds):
        raise ArgumentTypeError(f"latency must be a number of seconds, got {seconds!r}")
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_LATENCY:
        raise ValueError(f"latency must be between 0 and {MAX_LATENCY:g} seconds, got {seconds!r}")
    return float(seconds)


class Delayed(HandlerWrapper[Handler]):
    """A ``Request -> Response`` handler that answers like ``inner``, ``seconds`` later.

    Every other attribute (``provision``, ``mcp_path``, ``state`` ...) is ``inner``'s,
    so a delayed reference server is provisioned and inspected as usual; a door's
    ``serve_at`` reaches it (:class:`~pytest_osfoundry.http.HandlerWrapper`).

    Raises:
        ValueError: ``seconds`` is not a finite number between 0 and :data:`MAX_LATENCY`.
    """

    def __init__(
        self,
        inner: Handler,
        seconds: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(inner)
        self.seconds = check_latency(seconds)
        self._sleep = sleep

    def __call__(self, request: Request, /) -> Response:
        """Wait, then answer as ``inner`` does."""
        if self.seconds:
            self._sleep(self.seconds)
        return self.inner(request)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("inner", "seconds", "_sleep"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"Delayed({self.inner!r}, {self.seconds:g})"
