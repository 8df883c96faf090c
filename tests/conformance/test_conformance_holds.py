"""What a check holds while the others run (``_holds``): the shared session list.

The checks that share a list of their own (R8-default-limit, D10-sync-replaces,
D10-sync-max-100) run alongside the others; what keeps them apart is :class:`Holds`:
while one holds, the other checks' requests it excludes wait (syncs; with the list
held whole, reads of it too), and their other requests go on. Holds sharing one list
(the hundred sessions those three sync) hold together.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from pytest_osfoundry.conformance.scheduling._shared_list import (
    Guarded,
    Holds,
    ListUse,
    Scope,
    kind_of,
)
from pytest_osfoundry.conformance.server._harness import Conformance
from pytest_osfoundry.conformance.server._sessions import FIXED
from pytest_osfoundry.conformance.server._target import Target, resolve_target
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.conformance.suite._registry import check_info, find_check
from pytest_osfoundry.http import Response

MCP = "http://127.0.0.1:9/mcp"
SYNC = "http://127.0.0.1:9/external-assistants/graph-relays/sync"
WAIT = 5.0
"""Seconds a test waits for something that must happen (it happens at once)."""
SETTLE = 0.2
"""Seconds a test gives something that must not happen."""


def _call(name: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}
    ).encode()


@pytest.mark.parametrize(
    ("method", "url", "body", "use"),
    [
        ("POST", "http://127.0.0.1:9/external-assistants/graph-relays/sync", b"{}", "sync"),
        ("POST", MCP, _call("run_graph_session"), "read"),
        ("POST", MCP, _call("list_graph_sessions"), "read"),
        ("POST", MCP, _call("get_graph_run"), None),
        ("POST", MCP, _call("cancel_graph_run"), None),
        ("POST", MCP, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', None),
        ("POST", MCP, b"tools/call, not JSON", None),
        ("POST", "http://127.0.0.1:9/other", _call("run_graph_session"), None),
        ("GET", "http://127.0.0.1:9/external-assistants/graph-relays/sync", b"", None),
        (
            "POST",
            "http://127.0.0.1:9/external-assistants/graph-relays/commands/x/start",
            b"{}",
            None,
        ),
    ],
)
def test_which_requests_depend_on_the_list(
    method: str, url: str, body: bytes, use: str | None
) -> None:
    assert kind_of(method, url, MCP, body) == (use or "other")


def _in_thread(work: threading.Event, block: object) -> tuple[threading.Thread, threading.Event]:
    """Enter ``block`` (a context manager) in a new thread, hold it until ``work`` is set;
    the event set once inside."""
    inside = threading.Event()

    def run() -> None:
        with block:  # type: ignore[attr-defined]
            inside.set()
            work.wait(WAIT)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, inside


KINDS: tuple[ListUse, ...] = ("sync", "read")
WAITS: dict[Scope, set[ListUse]] = {"holds": set(), "syncs": {"sync"}, "list": {"sync", "read"}}
EXCLUDING: list[Scope] = [scope for scope, kinds in WAITS.items() if kinds]


@pytest.mark.parametrize("scope", list(WAITS))
def test_a_hold_keeps_the_requests_it_excludes_waiting_and_no_other(scope: Scope) -> None:
    holds, holder_check, other_check = Holds(), object(), object()
    release = threading.Event()
    holder, held = _in_thread(release, holds.hold(holder_check, scope))
    assert held.wait(WAIT)
    started = {kind: _in_thread(release, holds.request(other_check, kind)) for kind in KINDS}
    for kind, (_, inside) in started.items():
        if kind in WAITS[scope]:
            assert not inside.wait(SETTLE), f"a {kind} went during a hold of {scope}"
        else:
            assert inside.wait(WAIT), f"a {kind} waited for a hold of {scope}"
    release.set()
    for _, inside in started.values():
        assert inside.wait(WAIT)
    for thread in [holder, *(t for t, _ in started.values())]:
        thread.join(WAIT)


class _Inner:
    """A transport that answers at once, noting what it was sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def request(self, method: str, url: str, headers: object, body: bytes) -> Response:
        self.sent.append(url)
        return Response(200, {}, b"{}")


def test_other_requests_go_on_during_a_hold_of_the_whole_list_and_reads_wait() -> None:
    holds = Holds()
    holder, other = Guarded(_Inner(), holds, MCP), Guarded(_Inner(), holds, MCP)
    with holder.hold("list"):
        holder.request("POST", SYNC, {}, b"{}")  # the holder's own sync goes
        other.request("POST", MCP, {}, _call("get_graph_run"))  # not about the list: goes
        other.request("GET", MCP, {}, b"")
        read = threading.Thread(
            target=other.request, args=("POST", MCP, {}, _call("list_graph_sessions"))
        )
        read.start()
        read.join(SETTLE)
        assert read.is_alive(), "a read of the list went during a hold of the whole list"
    read.join(WAIT)
    assert not read.is_alive()
    assert isinstance(other.inner, _Inner) and len(other.inner.sent) == 3


def test_requests_of_every_kind_go_at_once_together() -> None:
    holds = Holds()
    release = threading.Event()
    started = [_in_thread(release, holds.request(object(), kind)) for kind in KINDS * 2]
    assert all(inside.wait(WAIT) for _, inside in started)
    release.set()
    for thread, _ in started:
        thread.join(WAIT)


@pytest.mark.parametrize("scope", EXCLUDING)
def test_a_hold_waits_for_a_sync_in_flight_and_goes_before_new_ones(scope: Scope) -> None:
    holds = Holds()
    release_first = threading.Event()
    first, one = _in_thread(release_first, holds.request(object(), "sync"))
    assert one.wait(WAIT)
    release_holder = threading.Event()
    holder, held = _in_thread(release_holder, holds.hold(object(), scope))
    assert not held.wait(SETTLE), "the holder went while a sync was in flight"
    late, late_in = _in_thread(release_holder, holds.request(object(), "sync"))
    assert not late_in.wait(SETTLE), "a new sync went before the waiting holder"
    release_first.set()
    assert held.wait(WAIT)
    assert not late_in.is_set()
    release_holder.set()
    assert late_in.wait(WAIT)
    for thread in (first, holder, late):
        thread.join(WAIT)


def test_a_hold_of_the_whole_list_waits_for_reads_in_flight() -> None:
    holds = Holds()
    release_read = threading.Event()
    reader, reading = _in_thread(release_read, holds.request(object(), "read"))
    assert reading.wait(WAIT)
    release_syncs = threading.Event()
    syncs_holder, syncs_held = _in_thread(release_syncs, holds.hold(object(), "syncs"))
    assert syncs_held.wait(WAIT), "a hold of syncs waited for a read"
    release_syncs.set()
    syncs_holder.join(WAIT)
    release_list = threading.Event()
    holder, held = _in_thread(release_list, holds.hold(object(), "list"))
    assert not held.wait(SETTLE), "a hold of the whole list went while a read was in flight"
    release_read.set()
    assert held.wait(WAIT)
    release_list.set()
    for thread in (reader, holder):
        thread.join(WAIT)


def test_holds_do_not_overlap() -> None:
    holds = Holds()
    release = threading.Event()
    first, one = _in_thread(release, holds.hold(object(), "syncs"))
    assert one.wait(WAIT)
    second, two = _in_thread(release, holds.hold(object(), "syncs"))
    assert not two.wait(SETTLE), "two checks held at once"
    release.set()
    assert two.wait(WAIT)
    for thread in (first, second):
        thread.join(WAIT)


def test_holds_sharing_one_list_hold_together_and_others_wait_for_all() -> None:
    holds = Holds()
    first_done, second_done = threading.Event(), threading.Event()
    first, one = _in_thread(first_done, holds.hold(object(), "syncs", "hundred"))
    assert one.wait(WAIT)
    second, two = _in_thread(second_done, holds.hold(object(), "syncs", "hundred"))
    assert two.wait(WAIT), "two checks sharing one list did not hold together"
    # another check's sync, a hold of another list and an unshared hold all wait ...
    sync_done = threading.Event()
    syncer, synced = _in_thread(sync_done, holds.request(object(), "sync"))
    other_done = threading.Event()
    other, held = _in_thread(other_done, holds.hold(object(), "syncs", "another"))
    assert not synced.wait(SETTLE) and not held.wait(0)
    # ... until every holder of the shared list has let go
    first_done.set()
    first.join(WAIT)
    assert not synced.wait(SETTLE) and not held.wait(0)
    second_done.set()
    assert held.wait(WAIT), "the other list's hold did not follow"
    assert not synced.wait(SETTLE), "a sync went during the other list's hold"
    other_done.set()
    assert synced.wait(WAIT)
    sync_done.set()
    for thread in (second, other, syncer):
        thread.join(WAIT)


def test_a_waiting_hold_of_another_kind_goes_before_new_sharers() -> None:
    holds = Holds()
    sharing_done = threading.Event()
    sharer, shared = _in_thread(sharing_done, holds.hold(object(), "syncs", "hundred"))
    assert shared.wait(WAIT)
    alone_done = threading.Event()
    loner, alone = _in_thread(alone_done, holds.hold(object(), "list"))
    assert not alone.wait(SETTLE)
    late_done = threading.Event()
    latecomer, late = _in_thread(late_done, holds.hold(object(), "syncs", "hundred"))
    assert not late.wait(SETTLE), "a new sharer joined while another hold waited"
    sharing_done.set()
    assert alone.wait(WAIT)
    assert not late.wait(SETTLE), "the sharer went during the hold of the whole list"
    alone_done.set()
    assert late.wait(WAIT)
    late_done.set()
    for thread in (sharer, loner, latecomer):
        thread.join(WAIT)


@pytest.mark.parametrize("first", ["fixed", "hundred"])
def test_a_hold_of_the_fixed_list_keeps_out_only_the_holds_of_other_lists(first: str) -> None:
    """D10-sync-replaces' sync leaving the extra sessions out, and its read: every other
    check's sync shares that list, so they go on; a hundred-session sync must not come
    between, so the holds of other lists never overlap it, whichever came first."""
    holds = Holds()
    scopes: dict[str, Scope] = {"fixed": "holds", "hundred": "syncs"}
    second = "hundred" if first == "fixed" else "fixed"
    first_done, second_done = threading.Event(), threading.Event()
    one, held_one = _in_thread(first_done, holds.hold(object(), scopes[first], first))
    assert held_one.wait(WAIT)
    two, held_two = _in_thread(second_done, holds.hold(object(), scopes[second], second))
    assert not held_two.wait(SETTLE), f"a hold of the {second} list overlapped the {first} one"
    first_done.set()
    assert held_two.wait(WAIT)
    if second == "fixed":  # another check's sync goes during the hold of the fixed list
        sync_done = threading.Event()
        syncer, synced = _in_thread(sync_done, holds.request(object(), "sync"))
        assert synced.wait(WAIT), "a sync of the fixed list waited for its hold"
        sync_done.set()
        syncer.join(WAIT)
    second_done.set()
    for thread in (one, two):
        thread.join(WAIT)


def test_the_holders_own_requests_pass_from_any_thread_and_holding_nests() -> None:
    holds, check = Holds(), object()
    with holds.hold(check, "list"), holds.hold(check, "syncs"):
        passed = threading.Event()
        helper = threading.Thread(target=lambda: _enter(holds, check, passed))
        helper.start()
        assert passed.wait(WAIT), "the holding check's request from another thread waited"
        helper.join(WAIT)
    # released whole: another check's request goes
    done = threading.Event()
    syncer, synced = _in_thread(done, holds.request(object(), "sync"))
    assert synced.wait(WAIT)
    done.set()
    syncer.join(WAIT)


def _enter(holds: Holds, check: object, passed: threading.Event) -> None:
    with holds.request(check, "sync"):
        passed.set()


# ---------------------------------------------------------------------- through the harness
@pytest.fixture
def target() -> Iterator[Target]:
    made = resolve_target(Settings(osf_target="embedded"))
    yield made
    made.close()


def _context(target: Target, check_id: str) -> Conformance:
    info = check_info(find_check(check_id))
    assert info is not None
    return Conformance(target, info)


def test_another_checks_sync_waits_for_the_holder_and_its_tool_calls_go(
    target: Target,
) -> None:
    holder = _context(target, "R8-default-limit")
    other = _context(target, "D1-run-only-queues")
    other.desktop.sync()
    command_id = other.agent.queue()["command_id"]
    synced = threading.Event()
    viewed = threading.Event()

    def sync() -> None:
        other.desktop.sync()
        synced.set()

    def view_and_queue() -> None:
        other.agent.view(command_id)
        other.agent.queue()
        viewed.set()

    with holder.desktop.changing_list():
        holder.desktop.sync(holder.roles.sessions[:1])  # the holder's own request passes
        syncing = threading.Thread(target=sync)
        viewing = threading.Thread(target=view_and_queue)
        syncing.start()
        viewing.start()
        assert viewed.wait(WAIT), "a get_graph_run or run_graph_session waited for the holder"
        assert not synced.wait(SETTLE), "another check synced while the list was held"
        holder.desktop.sync()
    assert synced.wait(WAIT)
    syncing.join(WAIT)
    viewing.join(WAIT)
    holder.close()
    other.close()


def test_a_hold_of_the_fixed_list_lets_the_other_checks_sync(target: Target) -> None:
    holder, other = _context(target, "D10-sync-replaces"), _context(target, "D1-run-only-queues")
    with holder.desktop.changing_list(sharing=FIXED):
        syncing = threading.Thread(target=other.desktop.sync, daemon=True)
        syncing.start()
        syncing.join(WAIT)
        assert not syncing.is_alive(), "another check's sync waited for the fixed list's hold"
    holder.close()
    other.close()


def test_a_hold_of_everything_is_never_shared(target: Target) -> None:
    holder = _context(target, "D10-sync-max-100")
    with pytest.raises(ValueError, match="held alone"):
        holder.desktop.changing_list(everything=True, sharing="hundred")
    holder.close()
