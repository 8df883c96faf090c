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
  the same meanings and the same checks
  (:func:`~pytest_osfoundry.world.faults_config`), lists for tuples — sets them
  (:class:`ServeFaults`); ``GET /_osf/faults`` shows what is set and what the faults did.

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
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._checks import is_number
from pytest_osfoundry.clock import Clock, VirtualClock
from pytest_osfoundry.faults import (
    Fault,
    FaultyHandler,
    FaultyTransport,
    Latency,
    LoseRequests,
    schedule_death,
    schedule_offline,
)
from pytest_osfoundry.http import Handler, HandlerWrapper, Request, Response, json_response
from pytest_osfoundry.server._latency import MAX_LATENCY
from pytest_osfoundry.server._request_body import BadJson, parse_body

if TYPE_CHECKING:
    from pytest_osfoundry.relay._desktop import FakeRelay

__all__ = ["ADMIN_PREFIX", "DEFAULT_IDLE_LIMIT", "MAX_ADVANCE", "ClockAdmin", "ServeFaults"]

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

#: The faults that act on the fake desktop (serve --relay, on the virtual clock).
_DESKTOP_FAULTS = ("lose_completions", "offline", "desktop_dies")


class ServeFaults:
    """The world's faults on a running ``serve``, set and shown over the admin door.

    ``door`` is the :class:`~pytest_osfoundry.faults.FaultyHandler` in front of the
    server (its fault list is replaced in place): the agent-side faults
    (``drop_replies``, ``latency``, ``server_errors``) act there, ``drop_replies`` and
    ``latency`` on the MCP endpoint (``mcp_path``: an agent's calls, not the desktop's
    relay API). ``desktop`` is the in-process fake desktop's transport and ``relay``
    the desktop (``serve --virtual-clock --relay``): ``lose_completions`` loses its next
    completions, ``offline`` and ``desktop_dies`` are scheduled at their offsets from
    the moment they are set (a later setting adds to that schedule; nothing unschedules
    a window already set). On real time (not a :class:`VirtualClock`) only the
    agent-side faults are taken, ``latency`` at most ``MAX_LATENCY`` seconds (a worker
    thread waits it out), and the desktop faults are refused saying why. On the virtual
    clock ``latency`` moves the clock under :attr:`moving`, the lock the admin door
    moves it under, so the clock is moved by one thread at a time.
    """

    def __init__(
        self,
        clock: Clock,
        door: FaultyHandler,
        mcp_path: str,
        *,
        desktop: FaultyTransport | None = None,
        relay: FakeRelay | None = None,
    ) -> None:
        self.clock = clock
        self.door = door
        self.mcp_path = mcp_path
        self.desktop = desktop
        self.relay = relay
        self.fields: dict[str, Any] = {}
        self.scheduled: list[dict[str, Any]] = []
        self.moving = threading.Lock()
        """Held while the virtual clock moves (the admin door's moves, ``latency``'s)."""
        self._lock = threading.Lock()

    def set(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Replace the faults with ``fields`` (``{}``: none); what :meth:`view` then shows.

        Raises ``ValueError``/``TypeError`` naming the field, changing nothing.
        """
        from pytest_osfoundry.world import agent_faults, faults_config

        cfg = faults_config(fields)
        virtual = isinstance(self.clock, VirtualClock)
        for name in _DESKTOP_FAULTS:
            if name in fields and fields[name] not in (None, 0):
                if not virtual:
                    raise ValueError(
                        f"{name}: a desktop fault, which serve takes on the virtual clock only "
                        "(serve --virtual-clock --relay); on real time set the agent-side "
                        "faults (drop_replies, latency, server_errors)"
                    )
                if self.relay is None or self.desktop is None:
                    raise ValueError(
                        f"{name}: a desktop fault, and no desktop runs in this serve (add --relay)"
                    )
        if not virtual and cfg.latency > MAX_LATENCY:
            raise ValueError(f"latency: at most {MAX_LATENCY:g} seconds on real time, "
                             f"got {cfg.latency!r}")
        with self._lock:
            faults = agent_faults(cfg, self.clock, seed=cfg.seed, match=self.mcp_path)
            if virtual:  # a request's latency moves the clock: one mover at a time
                faults = [_Moving(f, self.moving) if isinstance(f, Latency) else f
                          for f in faults]
            self.door.faults[:] = faults
            if self.desktop is not None:
                lose = cfg.lose_completions
                self.desktop.faults[:] = [LoseRequests("/complete", count=lose)] if lose else []
            now = self.clock.now()
            if cfg.offline is not None and self.relay is not None:
                offset, duration, *mode = cfg.offline
                how = mode[0] if mode else "asleep"
                schedule_offline(self.clock, self.relay, now + offset, duration, mode=how)
                self.scheduled.append({"offline": [now + offset, now + offset + duration],
                                       "mode": how})
            if cfg.desktop_dies is not None and self.relay is not None:
                schedule_death(self.clock, self.relay, now + cfg.desktop_dies)
                self.scheduled.append({"desktop_dies": now + cfg.desktop_dies})
            self.fields = dict(fields)
        return self.view()

    def view(self) -> dict[str, Any]:
        """What is set, what is scheduled, and what the faults did so far."""
        did: dict[str, int] = {}
        for fault in [*self.door.faults, *(self.desktop.faults if self.desktop else [])]:
            for name in ("dropped", "served", "lost"):
                if hasattr(fault, name):
                    did[name] = did.get(name, 0) + int(getattr(fault, name))
        return {"faults": self.fields, "scheduled": self.scheduled, "counts": did,
                "clock": "virtual" if isinstance(self.clock, VirtualClock) else "real"}


class _BadBody(ValueError):
    """A body the admin path refuses (400); the message names the field."""


class _Moving:
    """A fault (``Latency`` on a virtual clock) applied while holding ``lock``."""

    def __init__(self, fault: Fault, lock: threading.Lock) -> None:
        self.fault = fault
        self.lock = lock

    def before(self, method: str, url: str) -> Response | None:
        with self.lock:
            return self.fault.before(method, url)

    def after(self, method: str, url: str, response: Response) -> None:
        self.fault.after(method, url, response)


class ClockAdmin(HandlerWrapper[Handler]):
    """The admin path in front of ``inner`` (see the module's docstring)."""

    def __init__(
        self,
        inner: Handler,
        clock: VirtualClock | None,
        admin_token: str,
        idle: Callable[[], bool],
        mask: Callable[[str], str] | None = None,
        faults: ServeFaults | None = None,
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
        from pytest_osfoundry.client._exchange import mask_token

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
    if not is_number(value):
        raise _BadBody(f"{name}: must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise _BadBody(f"{name}: must be finite and not negative, got {value!r}")
    if seconds > high:
        raise _BadBody(f"{name}: at most {high:g} seconds at once, got {value!r}")
    return seconds


def _error(
    status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    return json_response(status, {"error": message, **extra}, headers)
