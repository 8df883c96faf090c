"""ClockAdmin in-process: idle, busy, and its refusals of bad set-up."""

from __future__ import annotations

import pytest

from pytest_osfoundry.clock import RealClock, VirtualClock
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server._clock_admin import ClockAdmin

TOKEN = "osf_admin_" + "x" * 20


def inner(request: Request) -> Response:
    return json_response(200, {"inner": request.path})


def post(admin: ClockAdmin, path: str, body: bytes = b"") -> Response:
    return admin(Request.build("POST", path, {"authorization": f"Bearer {TOKEN}"}, body))


def test_other_paths_reach_the_inner_handler_untouched() -> None:
    admin = ClockAdmin(inner, VirtualClock(), TOKEN, lambda: True)
    assert admin(Request.build("GET", "/mcp")).json() == {"inner": "/mcp"}
    assert admin(Request.build("GET", "/_osfoo")).json() == {"inner": "/_osfoo"}


def test_run_until_idle_stops_as_soon_as_idle() -> None:
    clock = VirtualClock()
    start = clock.now()
    done: list[float] = []
    clock.call_later(45, lambda: done.append(clock.now()))
    admin = ClockAdmin(inner, clock, TOKEN, lambda: bool(done))
    reply = post(admin, "/_osf/clock/run-until-idle")
    assert reply.status == 200 and reply.json()["advanced"] == 45
    assert clock.now() == start + 45


def test_still_busy_at_the_limit_is_409() -> None:
    clock = VirtualClock()

    def tick() -> None:
        clock.call_later(20, tick)

    tick()
    admin = ClockAdmin(inner, clock, TOKEN, lambda: False)
    reply = post(admin, "/_osf/clock/run-until-idle", b'{"limit": 100}')
    assert reply.status == 409 and "still busy after 100 s" in reply.json()["error"]
    nothing = ClockAdmin(inner, VirtualClock(), TOKEN, lambda: False)
    assert post(nothing, "/_osf/clock/run-until-idle").status == 409  # nothing left to run


def test_bad_set_up_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="VirtualClock"):
        ClockAdmin(inner, RealClock(), TOKEN, lambda: True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="16 characters"):
        ClockAdmin(inner, VirtualClock(), "short", lambda: True)
    with pytest.raises(TypeError, match="idle"):
        ClockAdmin(inner, VirtualClock(), TOKEN, "no")  # type: ignore[arg-type]
