"""Each fault's behaviour on a transport, and its bad arguments."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_osfoundry.client._errors import ReplyLost
from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.faults import (
    DropReplies,
    FaultyTransport,
    Latency,
    LoseRequests,
    ServerErrors,
)
from pytest_osfoundry.http import Response, json_response

BASE = "https://osf.test"
COMPLETE = BASE + "/external-assistants/graph-relays/commands/abc/complete"
CONTROL = BASE + "/external-assistants/graph-relays/commands/abc/control"
MCP = BASE + "/mcp"


class Counting:
    """An inner transport that answers 200 and counts what reached it."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.reached: list[tuple[str, str, float | None]] = []
        self.clock = clock

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        self.reached.append((method, url, self.clock.now() if self.clock else None))
        return json_response(200, {"ok": True})


def send(t: FaultyTransport, url: str = MCP, method: str = "POST") -> Response:
    return t.request(method, url, {}, b"{}")


def outcomes(t: FaultyTransport, n: int, url: str = MCP) -> list[str]:
    out = []
    for _ in range(n):
        try:
            out.append(str(send(t, url).status))
        except ReplyLost:
            out.append("lost")
    return out


# --------------------------------------------------------------------------- DropReplies


def test_drop_replies_reaches_the_server_and_loses_the_reply() -> None:
    inner = Counting()
    fault = DropReplies(fraction=1.0)
    t = FaultyTransport(inner, fault)
    with pytest.raises(ReplyLost, match="reply dropped"):
        send(t)
    assert len(inner.reached) == 1, "the request must reach the server"
    assert fault.dropped == 1


def test_drop_replies_zero_drops_nothing() -> None:
    t = FaultyTransport(Counting(), DropReplies(fraction=0.0))
    assert outcomes(t, 50) == ["200"] * 50


def test_drop_replies_drops_about_the_fraction_reproducibly_under_a_seed() -> None:
    a = outcomes(FaultyTransport(Counting(), DropReplies(fraction=0.3, seed=4)), 2000)
    b = outcomes(FaultyTransport(Counting(), DropReplies(fraction=0.3, seed=4)), 2000)
    c = outcomes(FaultyTransport(Counting(), DropReplies(fraction=0.3, seed=5)), 2000)
    assert a == b
    assert a != c
    assert 0.26 < a.count("lost") / 2000 < 0.34


def test_drop_replies_only_on_matching_paths_and_methods() -> None:
    inner = Counting()
    t = FaultyTransport(inner, DropReplies("/complete", method="post", fraction=1.0))
    assert send(t, MCP).status == 200
    assert send(t, CONTROL, "GET").status == 200
    assert send(t, COMPLETE, "GET").status == 200
    with pytest.raises(ReplyLost):
        send(t, COMPLETE, "POST")
    assert len(inner.reached) == 4


def test_the_match_is_on_the_path_not_the_host_or_query() -> None:
    t = FaultyTransport(Counting(), DropReplies("complete", fraction=1.0))
    assert send(t, "https://complete.example/mcp?x=complete").status == 200
    with pytest.raises(ReplyLost):
        send(t, "https://example/complete")


# --------------------------------------------------------------------------- LoseRequests


def test_lose_requests_loses_the_next_n_before_the_server() -> None:
    inner = Counting()
    fault = LoseRequests("/complete", count=2)
    t = FaultyTransport(inner, fault)
    assert outcomes(t, 4, COMPLETE) == ["lost", "lost", "200", "200"]
    assert len(inner.reached) == 2, "a lost request never reaches the server"
    assert fault.lost == 2


def test_lose_requests_ignores_other_paths_and_zero_loses_nothing() -> None:
    inner = Counting()
    t = FaultyTransport(inner, LoseRequests("/complete", count=1), LoseRequests(count=0))
    assert send(t, MCP).status == 200
    assert send(t, CONTROL, "GET").status == 200
    assert outcomes(t, 2, COMPLETE) == ["lost", "200"]


def test_lose_requests_reply_lost_names_the_request() -> None:
    t = FaultyTransport(Counting(), LoseRequests())
    with pytest.raises(ReplyLost, match="POST /mcp"):
        send(t)


# --------------------------------------------------------------------------- ServerErrors


def test_server_errors_answer_without_reaching_the_server() -> None:
    inner = Counting()
    fault = ServerErrors("/complete", count=2)
    t = FaultyTransport(inner, fault)
    assert outcomes(t, 3, COMPLETE) == ["503", "503", "200"]
    assert len(inner.reached) == 1
    assert fault.served == 2


def test_server_errors_always_with_a_chosen_status_and_a_json_body() -> None:
    t = FaultyTransport(Counting(), ServerErrors(status=429))
    for _ in range(5):
        reply = send(t)
        assert reply.status == 429
        assert b"429" in reply.body


# --------------------------------------------------------------------------- Latency


def test_latency_waits_on_the_clock_before_sending() -> None:
    clock = VirtualClock(0)
    inner = Counting(clock)
    t = FaultyTransport(inner, Latency("/mcp", seconds=2.5, clock=clock))
    send(t)
    send(t, CONTROL, "GET")
    assert inner.reached == [("POST", MCP, 2.5), ("GET", CONTROL, 2.5)]
    assert clock.now() == 2.5


def test_latency_runs_the_events_due_while_waiting() -> None:
    clock = VirtualClock(0)
    seen: list[float] = []
    clock.call_at(1, lambda: seen.append(clock.now()))
    send(FaultyTransport(Counting(clock), Latency(seconds=3, clock=clock)))
    assert seen == [1]


# --------------------------------------------------------------------------- order


def test_faults_apply_in_order_and_the_first_early_answer_wins() -> None:
    inner = Counting()
    lose = LoseRequests(count=1)
    errors = ServerErrors(count=1)
    t = FaultyTransport(inner, lose, errors)
    assert outcomes(t, 3) == ["lost", "503", "200"]
    assert (lose.lost, errors.served) == (1, 1)
    t2 = FaultyTransport(Counting(), ServerErrors(count=1), LoseRequests(count=1))
    assert outcomes(t2, 3) == ["503", "lost", "200"]


def test_a_faulty_transport_without_faults_is_transparent() -> None:
    inner = Counting()
    assert send(FaultyTransport(inner)).status == 200
    assert len(inner.reached) == 1


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("fraction", [-0.1, 1.1, math.nan, "0.5", None, True])
def test_drop_replies_refuses_a_bad_fraction(fraction: Any) -> None:
    with pytest.raises(ValueError, match="fraction"):
        DropReplies(fraction=fraction)


@pytest.mark.parametrize("count", [-1, 1.5, "1", None, True])
def test_lose_requests_refuses_a_bad_count(count: Any) -> None:
    with pytest.raises(ValueError, match="count"):
        LoseRequests(count=count)


@pytest.mark.parametrize("status", [200, 302, 399, 600, "503", True, None])
def test_server_errors_refuses_a_bad_status(status: Any) -> None:
    with pytest.raises(ValueError, match="status"):
        ServerErrors(status=status)


@pytest.mark.parametrize("count", [-1, 1.5, "2", True])
def test_server_errors_refuses_a_bad_count(count: Any) -> None:
    with pytest.raises(ValueError, match="count"):
        ServerErrors(count=count)


@pytest.mark.parametrize("seconds", [-1, math.nan, math.inf, "1", None, True])
def test_latency_refuses_bad_seconds(seconds: Any) -> None:
    with pytest.raises(ValueError, match="seconds"):
        Latency(seconds=seconds, clock=VirtualClock(0))


def test_latency_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        Latency(seconds=1)
    with pytest.raises(TypeError, match="clock"):
        Latency(seconds=1, clock="wall")  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [DropReplies, LoseRequests, ServerErrors])
@pytest.mark.parametrize(("field", "value"), [("match", 5), ("match", b"/mcp"), ("method", 1)])
def test_match_and_method_must_be_strings(make: Any, field: str, value: Any) -> None:
    with pytest.raises(TypeError, match=field):
        make(**{field: value})


def test_faulty_transport_refuses_a_bad_inner_or_fault() -> None:
    with pytest.raises(TypeError, match="inner must be a Transport"):
        FaultyTransport("transport")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a fault"):
        FaultyTransport(Counting(), "drop")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a fault"):
        FaultyTransport(Counting(), DropReplies, LoseRequests())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: DropReplies(fraction=2),
            "DropReplies.fraction must be a number from 0 to 1, got 2",
        ),
        (lambda: LoseRequests(count=-1), "LoseRequests.count must be a non-negative int, got -1"),
        (
            lambda: ServerErrors(status=302),
            "ServerErrors.status must be an HTTP error status 400-599, got 302",
        ),
        (lambda: ServerErrors(count=True), "ServerErrors.count must be an int, got True"),
        (
            lambda: Latency(seconds=math.inf, clock=VirtualClock(0)),
            "Latency.seconds must be a non-negative number of seconds, got inf",
        ),
    ],
)
def test_fault_messages_name_the_argument_as_typed(make: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message
