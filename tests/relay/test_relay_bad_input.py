"""Bad input to the fake relay's constructor and methods gets a clear error."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.engine import FakeEngine
from pytest_osfoundry.relay._desktop import FakeRelay
from pytest_osfoundry.relay._outbox import MemoryOutbox
from tests.relay.osf_relay_kit import world

GSID = "gs_" + "a" * 32


def parts() -> tuple[Any, Any, Any]:
    w = world(start_relay=False)
    return w.clock, w.relay_client(), w.engine


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"clock": "not a clock"}, TypeError, "clock"),
        ({"client": object()}, TypeError, "client must provide the RelayApiClient methods"),
        ({"engine": "engine"}, TypeError, "engine must provide the Engine methods"),
        ({"outbox": True}, TypeError, "outbox"),
        ({"outbox": "a file name"}, TypeError, "outbox"),
        ({"outbox": {}}, TypeError, "outbox"),
        ({"interval": 0}, ValueError, "interval"),
        ({"interval": -20}, ValueError, "interval"),
        ({"interval": math.nan}, ValueError, "interval"),
        ({"interval": "20"}, ValueError, "interval"),
        ({"interval": True}, ValueError, "interval"),
        ({"control_poll": 0}, ValueError, "control_poll"),
        ({"control_poll": None}, ValueError, "control_poll"),
        ({"max_sessions": 0}, ValueError, "max_sessions"),
        ({"max_sessions": 2.5}, ValueError, "max_sessions"),
        ({"max_sessions": True}, ValueError, "max_sessions"),
    ],
)
def test_the_constructor_refuses_bad_arguments(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    clock, client, engine = parts()
    base: dict[str, Any] = {"clock": clock, "client": client, "engine": engine}
    base.update(kwargs)
    with pytest.raises(error, match=match):
        FakeRelay(base.pop("clock"), base.pop("client"), base.pop("engine"), **base)


def test_the_constructor_accepts_every_documented_outbox() -> None:
    clock, client, engine = parts()
    assert FakeRelay(clock, client, engine, outbox=False).outbox is None
    assert isinstance(FakeRelay(clock, client, engine).outbox, MemoryOutbox)
    box = MemoryOutbox()
    assert FakeRelay(clock, client, engine, outbox=box).outbox is box


@pytest.mark.parametrize("phase", [-1, math.nan, "5", True, None])
def test_start_refuses_a_bad_phase_and_stays_stopped(phase: Any) -> None:
    clock, client, engine = parts()
    relay = FakeRelay(clock, client, engine)
    with pytest.raises(ValueError, match="phase"):
        relay.start(phase=phase)
    assert not relay.running
    relay.start(phase=1)  # still startable
    assert relay.running


def test_start_twice_is_an_error() -> None:
    clock, client, engine = parts()
    relay = FakeRelay(clock, client, engine)
    relay.start()
    with pytest.raises(RuntimeError, match="already started"):
        relay.start()


@pytest.mark.parametrize("project_id", ["", None, 5])
def test_share_refuses_a_bad_project_id(project_id: Any) -> None:
    clock, client, engine = parts()
    relay = FakeRelay(clock, client, engine)
    with pytest.raises(ValueError, match="project_id"):
        relay.share(project_id, [])


@pytest.mark.parametrize(
    ("session", "error", "match"),
    [
        ("gs_x", TypeError, "SessionInfo or a mapping"),
        (42, TypeError, "SessionInfo or a mapping"),
        ({"slug": "s"}, ValueError, "graph_session_id"),
        ({"graph_session_id": GSID}, ValueError, "slug"),
        ({"graph_session_id": GSID, "slug": ""}, ValueError, "slug"),
        ({"graph_session_id": 7, "slug": "s"}, ValueError, "graph_session_id"),
    ],
)
def test_share_refuses_a_bad_session_and_changes_nothing(
    session: Any, error: type[Exception], match: str
) -> None:
    w = world()
    before = w.relay.shared_sessions(w.project_id)
    passes = len(w.relay.passes)
    good = {"graph_session_id": "gs_" + "b" * 32, "slug": "good"}
    with pytest.raises(error, match=match):
        w.relay.share(w.project_id, [good, session])
    assert w.relay.shared_sessions(w.project_id) == before
    assert len(w.relay.passes) == passes, "a refused change must not trigger a pass"
    with pytest.raises(error, match=match):
        w.relay.tick(w.project_id, session)


def test_a_mapping_session_gets_the_documented_defaults() -> None:
    w = world()
    w.relay.tick(w.project_id, {"graph_session_id": GSID, "slug": "my-graph"})
    shared = w.relay.shared_sessions(w.project_id)[-1]
    assert shared == {
        "graph_session_id": GSID,
        "name": "my-graph",
        "description": "",
        "slug": "my-graph",
        "version": 1,
        "status": "active",
    }


def test_methods_on_a_project_never_shared_name_it() -> None:
    clock, client, engine = parts()
    relay = FakeRelay(clock, client, engine)
    for call in (
        lambda: relay.disable("proj_x"),
        lambda: relay.tick("proj_x", {"graph_session_id": GSID, "slug": "s"}),
        lambda: relay.untick("proj_x", GSID),
        lambda: relay.rename("proj_x", GSID, "s"),
        lambda: relay.shared_sessions("proj_x"),
    ):
        with pytest.raises(KeyError, match="proj_x"):
            call()


def test_untick_and_rename_of_an_unticked_session_name_it() -> None:
    w = world()
    with pytest.raises(KeyError, match=GSID):
        w.relay.untick(w.project_id, GSID)
    with pytest.raises(KeyError, match=GSID):
        w.relay.rename(w.project_id, GSID, "s")


@pytest.mark.parametrize("slug", ["", None, 3])
def test_rename_refuses_a_bad_slug(slug: Any) -> None:
    w = world()
    with pytest.raises(ValueError, match="slug"):
        w.relay.rename(w.project_id, w.sessions[0].graph_session_id, slug)


def test_a_relay_on_its_own_engine_and_clock_works() -> None:
    # The constructor takes any clock with the Clock interface (here a fresh one).
    w = world(start_relay=False)
    clock = VirtualClock()
    relay = FakeRelay(clock, w.relay_client(), FakeEngine(clock))
    relay.share(w.project_id, w.sessions)
    relay.start()
    clock.advance(0)
    assert [e.kind for e in relay.events] == ["synced"]


def test_on_event_needs_a_callable_and_then_sees_every_event() -> None:
    w = world(start_relay=False)
    with pytest.raises(TypeError, match="listener must be callable"):
        w.relay.on_event("print")  # type: ignore[arg-type]
    seen: list[str] = []
    w.relay.on_event(lambda event: seen.append(event.kind))
    w.relay.start()
    w.clock.advance(0)
    assert seen == [e.kind for e in w.relay.events] == ["synced"]


def test_a_graph_the_engine_cannot_start_is_reported_failed() -> None:
    """No Graph for the session: the run ends ``failed`` instead of staying ``running``."""
    from pytest_osfoundry.engine import FakeEngine
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    world = OsfWorld(WorldConfig(seed=4))
    world.engine.default = None  # the desktop has no Graph for any session
    assert isinstance(world.engine, FakeEngine)
    agent = world.make_agent()
    run = agent.run(world.sessions[0].graph_session_id)
    assert run.status == "failed"
    assert run.view is not None and "could not start the Graph" in run.view["error"]
    assert world.engine.runs == []


def test_a_stop_before_run_is_not_lost() -> None:
    from pytest_osfoundry.clock import RealClock

    clock = RealClock()
    clock.stop()
    clock.call_later(30, lambda: None)
    clock.run()  # returns at once instead of waiting 30 s
    assert clock.pending == 1
