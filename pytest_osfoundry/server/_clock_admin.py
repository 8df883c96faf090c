"""``serve``'s admin door: a virtual clock and the world's faults, from any language.

:class:`ClockAdmin` stands in front of a handler (the reference server), on a
:class:`~pytest_osfoundry.clock.VirtualClock` that moves only when told (``clock``) or
on real time (``clock=None``: the clock paths answer 404 saying so). Requests under
:data:`ADMIN_PREFIX` are its own; everything else goes to the inner handler:

* ``GET /_osf/clock`` — ``{"now": <epoch seconds>, "events_run": n}``.
* ``POST /_osf/clock/advance`` with ``{"seconds": 20}`` — move the clock that far,
  running every event due on the way (relay passes, Graph completions, control
  polls), in order; answers the new ``now``.
* ``POST /_osf/clock/run-until-idle`` with ``{}`` or ``{"limit": 3600}`` — run events
  until nothing is in progress (the ``idle`` predicate: no run queued or running and
  nothing waiting to be delivered), at most ``limit`` virtual seconds (default 3600);
  ``409`` when it is still busy by then.
* ``POST /_osf/faults`` with the ``osf`` marker's faults
  (:data:`~pytest_osfoundry.world.FAULT_FIELDS`: ``drop_replies``, ``latency``,
  ``server_errors``, ``lose_completions``, ``offline``, ``desktop_dies``, ``seed``),
  lists for tuples — sets them through the :class:`AdminFaults` it is given
  (``serve``'s: :class:`~pytest_osfoundry._serve_faults.ServeFaults`, the same meanings
  and checks as the marker); ``GET /_osf/faults`` shows what is set and what the faults
  did.

Only the admin token opens it (``Authorization: Bearer <admin token>``, compared in
constant time): no token is ``401``, any other token — an agent's, the desktop's —
is ``403``. A bad body is ``400`` naming the field; a wrong method ``405`` with
``Allow``; an unknown admin path ``404``. The clock is moved by one request at a time.
An error that quotes the request (a path, a field's name or value) passes through
``mask`` first (``serve --virtual-clock``: the server's token mask) and never shows
the admin token.
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from pytest_osfoundry._checks import is_number
from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.http import Handler, HandlerWrapper, Request, Response, json_response
from pytest_osfoundry.server._request_body import BadJson, parse_body

__all__ = [
    "ADMIN_PREFIX", "DEFAULT_IDLE_LIMIT", "MAX_ADVANCE", "AdminFaults", "ClockAdmin", "shown",
]

#: The admin path's prefix; the reference server serves nothing under it.
ADMIN_PREFIX = "/_osf/"
#: Virtual seconds ``run-until-idle`` runs at most unless told another ``limit``.
DEFAULT_IDLE_LIMIT = 3600.0
#: The most one request may move the clock (a year): a typo is not a century.
MAX_ADVANCE = 366 * 86400.0

_ROUTES = {
    "/_osf/clock": ("GET",),
    "/_osf/clock/advance": ("POST",),
    "/_osf/clock/run-until-idle": ("POST",),
    "/_osf/faults": ("GET", "POST"),
}

class AdminFaults(Protocol):
    """What the admin door needs of the faults it sets (``serve``'s: its
    ``_serve_faults.ServeFaults``)."""

    @property
    def moving(self) -> AbstractContextManager[Any]:
        """Held while the virtual clock moves; the admin door moves it under it too."""
        ...

    def set(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Replace the faults with ``fields``; raise ``ValueError``/``TypeError`` naming
        the field, changing nothing."""
        ...

    def view(self) -> dict[str, Any]:
        """What is set, what is scheduled, and what the faults did so far."""
        ...


class _BadBody(ValueError):
    """A body the admin path refuses (400); the message names the field."""


class ClockAdmin(HandlerWrapper[Handler]):
    """The admin path in front of ``inner`` (see the module's docstring)."""

    def __init__(
        self,
        inner: Handler,
        clock: VirtualClock | None,
        admin_token: str,
        idle: Callable[[], bool],
        mask: Callable[[str], str] | None = None,
        faults: AdminFaults | None = None,
    ) -> None:
        if clock is not None and not isinstance(clock, VirtualClock):
            raise TypeError(f"ClockAdmin needs a VirtualClock or None, got {clock!r}")
        if not isinstance(admin_token, str) or len(admin_token) < 16:
            raise ValueError("the admin token must be a string of at least 16 characters")
        if not callable(idle):
            raise TypeError(f"idle must be a () -> bool callable, got {idle!r}")
        super().__init__(inner)
        self.clock = clock
        self._token = admin_token.encode()
        self.admin_token = admin_token
        """The token that opens the door (never shown in what it answers)."""
        self._idle = idle
        self._mask = mask
        self.faults = faults
        self._moving = faults.moving if faults is not None else threading.Lock()

    def __getattr__(self, name: str) -> object:
        """Everything else (``provision``, ``state``, ...) is the inner handler's."""
        if name.startswith("__") or name in (
            "inner", "clock", "_token", "_idle", "_mask", "_moving", "faults", "admin_token"
        ):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __call__(self, request: Request, /) -> Response:
        if not request.path.startswith(ADMIN_PREFIX) and request.path != ADMIN_PREFIX.rstrip("/"):
            return self.inner(request)
        refusal = self._refuse(request)
        if refusal is not None:
            return refusal
        path = request.path.rstrip("/") or "/"
        methods = _ROUTES.get(path)
        if methods is None:
            return _error(
                404, self._echo(f"no admin path {path}; there are {', '.join(sorted(_ROUTES))}")
            )
        if request.method not in methods:
            allow = ", ".join(methods)
            return _error(405, f"{path} takes {' or '.join(methods)}", {"allow": allow})
        if path == "/_osf/faults":
            return self._faults(request)
        if self.clock is None:
            return _error(404, f"{path}: this serve runs on real time (serve --virtual-clock "
                          "has a clock to move)")
        try:
            fields = _fields(request.body, allowed=_ALLOWED[path])
            with self._moving:
                return self._answer(path, self.clock, fields)
        except _BadBody as err:
            return _error(400, self._echo(str(err)))

    def _faults(self, request: Request) -> Response:
        if self.faults is None:
            return _error(404, "/_osf/faults: this admin door sets no faults")
        if request.method == "GET":
            return json_response(200, self.faults.view())
        try:
            fields = _fields(request.body, allowed=None)
            with self._moving:
                return json_response(200, self.faults.set(fields))
        except _BadBody as err:
            return _error(400, self._echo(str(err)))
        except (TypeError, ValueError) as err:  # the marker's checks: the message names it
            return _error(400, self._echo(str(err)))

    def _echo(self, text: str) -> str:
        """``text`` (which quotes the request) with the admin token and, through
        ``mask``, the server's tokens masked."""
        from pytest_osfoundry._masking import mask_token

        if self._mask is not None:
            text = self._mask(text)
        return mask_token(text, [self._token.decode()])

    def _refuse(self, request: Request) -> Response | None:
        header = request.header("authorization") or ""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _error(
                401, "the clock's admin path needs Authorization: Bearer <admin token>",
                {"www-authenticate": 'Bearer realm="osfoundry-clock"'},
            )
        if not hmac.compare_digest(token.strip().encode(), self._token):
            return _error(403, "this token does not open the clock's admin path (the admin "
                          "token does: admin_token in serve's JSON line)")
        return None

    def _answer(self, path: str, clock: VirtualClock, fields: dict[str, Any]) -> Response:
        if path == "/_osf/clock/advance":
            if "seconds" not in fields:
                raise _BadBody('seconds: required, e.g. {"seconds": 20}')
            seconds = _seconds(fields["seconds"], "seconds", high=MAX_ADVANCE)
            clock.advance(seconds)
            return self._now(clock, advanced=seconds)
        if path == "/_osf/clock/run-until-idle":
            limit = _seconds(fields.get("limit", DEFAULT_IDLE_LIMIT), "limit", high=MAX_ADVANCE)
            start = clock.now()
            try:
                clock.run_until(self._idle, limit=limit)
            except TimeoutError:
                if not self._idle():
                    return _error(
                        409, f"still busy after {clock.now() - start:g} s of virtual time "
                        f"(limit {limit:g} s)", now=clock.now(),
                    )
            return self._now(clock, advanced=clock.now() - start, idle=True)
        return self._now(clock)

    def _now(self, clock: VirtualClock, **extra: Any) -> Response:
        return json_response(200, {"now": clock.now(), "events_run": clock.events_run, **extra})


_ALLOWED: dict[str, tuple[str, ...]] = {
    "/_osf/clock": (),
    "/_osf/clock/advance": ("seconds",),
    "/_osf/clock/run-until-idle": ("limit",),
}


def _fields(body: bytes, *, allowed: tuple[str, ...] | None) -> dict[str, Any]:
    """The body's JSON object (an empty body is ``{}``); unknown fields are refused by name
    (``allowed=None``: the caller checks the fields)."""
    if not body.strip():
        return {}
    try:
        value = parse_body(body)
    except BadJson as err:
        raise _BadBody(f"body: {err}") from None
    if not isinstance(value, dict):
        raise _BadBody(f"body: must be a JSON object, got {type(value).__name__}")
    unknown = sorted(set(value) - set(allowed)) if allowed is not None else []
    if allowed is not None and unknown:
        accepted = ", ".join(allowed) or "none"
        raise _BadBody(f"{unknown[0]}: unknown field (accepted: {accepted})")
    return value


def _seconds(value: Any, name: str, *, high: float) -> float:
    """``value`` as seconds from 0 to ``high``, compared before any conversion (an
    integer past a float is refused, not an ``OverflowError``)."""
    if not is_number(value):
        raise _BadBody(f"{name}: must be a number of seconds, got {shown(value)}")
    if not 0 <= value <= high:  # NaN and infinities fail it too
        raise _BadBody(
            f"{name}: a number of seconds from 0 to {high:.0f} (a year) at once, "
            f"got {shown(value)}"
        )
    return float(value)


def shown(value: object) -> str:
    """``repr(value)`` for an error that quotes a request's value, shortened when long
    (a 400-digit integer, a long string) so that the error stays one short line."""
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's repr limit
        return "an integer too long to show"
    if len(text) <= 60:
        return text
    if isinstance(value, int):
        return f"an integer of {len(text.lstrip('-'))} digits"
    return f"{text[:40]}... ({len(text)} characters)"


def _error(
    status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    return json_response(status, {"error": message, **extra}, headers)
