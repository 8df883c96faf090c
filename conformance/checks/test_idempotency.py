"""Idempotency: the key's bounds and retries (D7), keys belonging to one agent (R5),
simultaneous retries (R5) and simultaneous identical completions (R11).

"Nothing queued" is checked the way the desktop would see it: every refused call
carries unique ``arguments``, and the next sync must deliver no command with them.
"""

from __future__ import annotations

import threading
from typing import Any

from pytest_osfoundry.client._errors import HttpStatusError, OsfClientError
from pytest_osfoundry.conformance._harness import Conformance, Outcome, decode_reply
from pytest_osfoundry.conformance._registry import check

KEY_CONFLICT = "idempotency_key was already used with different arguments"

#: Simultaneous calls in the concurrency check, each on its own connection and session.
CALLERS = 8


def _refused_key(conf: Conformance, key: Any, what: str, *, omit: bool = False) -> None:
    __tracebackhide__ = True
    conf.sync()
    args = conf.run_args(key=key)
    if omit:
        del args["idempotency_key"]
    out = conf.call_start(conf.agent, args)
    conf.decisive()
    conf.expect_schema_refusal(out, what)
    conf.expect_nothing_queued(args["arguments"], f"{what} was refused")


@check(
    "D7-key-required", "run_graph_session without idempotency_key is refused and queues nothing."
)
def check_key_required(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, None, "a call without idempotency_key", omit=True)


@check("D7-key-too-short", "A 7-character idempotency_key is refused and queues nothing.")
def check_key_too_short(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, "k" * 7, "a 7-character key")


@check("D7-key-too-long", "A 129-character idempotency_key is refused and queues nothing.")
def check_key_too_long(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, "k" * 129, "a 129-character key")


@check("D7-key-bounds", "8- and 128-character idempotency keys are accepted.")
def check_key_bounds(osf_conf: Conformance) -> None:
    c = osf_conf
    for length in (8, 128):
        key = (c.nonce + c.new_key() * 5)[:length]
        ticket = c.queue(key=key)
        c.expect_equal(ticket.get("status"), "queued", f"status with a {length}-character key")


@check(
    "D7-retry-same-key",
    "Retrying run_graph_session with the same key and arguments returns the same command "
    "id and queues one run only.",
)
def check_retry_same_key(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.new_key(), c.probe()
    first = c.queue(key=key, arguments=probe)
    again = c.queue(key=key, arguments=probe)
    c.decisive()
    c.expect_equal(again.get("command_id"), first["command_id"], "the retry's command_id")
    delivered = c.commands_with(c.sync(), probe)
    c.expect_equal(len(delivered), 1, "commands the desktop gets for the two calls")


@check(
    "R5-different-arguments",
    "The same key with different arguments is refused with 'idempotency_key was already "
    "used with different arguments' and queues nothing.",
)
def check_different_arguments(osf_conf: Conformance) -> None:
    c = osf_conf
    key = c.new_key()
    c.queue(key=key, arguments=c.probe())
    other = c.probe()
    out = c.call_start(c.agent, c.run_args(key=key, arguments=other))
    c.decisive()
    c.expect_error(out, KEY_CONFLICT, "the same key with different arguments")
    c.expect_nothing_queued(other, "the conflicting call was refused")


@check(
    "R5-different-session",
    "The same key for another session is refused with the idempotency_key error and "
    "queues nothing.",
)
def check_different_session(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.new_key(), c.probe()
    c.queue(key=key, arguments=probe)
    out = c.call_start(c.agent, c.run_args(session=c.sessions[2], key=key, arguments=probe))
    c.decisive()
    c.expect_error(out, KEY_CONFLICT, "the same key for another session")
    delivered = c.commands_with(c.sync(), probe)
    c.expect_equal(len(delivered), 1, "commands queued with the key")


@check(
    "R5-key-per-agent",
    "Another agent using the same key and arguments gets its own run and never sees the "
    "first agent's command id.",
)
def check_key_per_agent(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.new_key(), c.probe()
    other = c.other_agent
    first = c.queue(key=key, arguments=probe)["command_id"]
    out = c.call_start(other, c.run_args(key=key, arguments=probe))
    c.decisive()
    c.expect(
        first.encode() not in out.raw,
        "the other agent's answer contains the first agent's command id",
    )
    c.expect(
        out.kind == "result" and out.structured is not None,
        f"the other agent's run_graph_session answered {out.describe()}",
    )
    assert out.structured is not None
    second = out.structured.get("command_id")
    c.expect(second != first, "the other agent got the first agent's command id")
    delivered = c.commands_with(c.sync(), probe)
    c.expect_equal(len(delivered), 2, "runs queued by the two agents with one key")


@check(
    "R5-concurrent-same-key",
    f"{CALLERS} simultaneous run_graph_session calls with one key and the same arguments, "
    "on separate connections, queue one run: every success carries the same command id.",
)
def check_concurrent_same_key(osf_conf: Conformance) -> None:
    c = osf_conf
    c.sync()
    args = c.run_args()
    token = c.need("agent_token")
    clients = [c.initialized(c.mcp(token)) for _ in range(CALLERS)]
    answers: list[Outcome | str] = _together(
        CALLERS, lambda i: decode_reply(clients[i].call_tool_raw("run_graph_session", args))
    )
    c.decisive()
    command_ids: set[str] = set()
    for index, out in enumerate(answers):
        if isinstance(out, str):
            c.fail(f"simultaneous call {index + 1} of {CALLERS} got no answer: {out}")
        if out.kind == "tool_error":
            continue  # a refusal of a concurrent duplicate is allowed
        command_id = out.structured.get("command_id") if out.structured else None
        c.expect(
            out.kind == "result" and isinstance(command_id, str),
            f"simultaneous call {index + 1} of {CALLERS} answered {out.describe()}",
        )
        assert isinstance(command_id, str)
        command_ids.add(command_id)
        c.track(clients[index], command_id)
    delivered = c.commands_with(c.sync(), args["arguments"])
    for command in delivered:
        if isinstance(command.get("command_id"), str):
            c.track(c.agent, str(command["command_id"]))
    c.expect(
        len(command_ids) <= 1,
        f"{CALLERS} simultaneous calls with one key got {len(command_ids)} different "
        "command ids: the key's look-up and insert are not atomic",
    )
    c.expect_equal(len(delivered), 1, f"commands the desktop gets for {CALLERS} simultaneous calls")


def _together(count: int, call: Any) -> list[Any]:
    """``call(index)`` made by ``count`` threads released at once; each one's outcome."""
    barrier = threading.Barrier(count)
    outcomes: list[Any] = ["no answer"] * count

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            outcomes[index] = call(index)
        except HttpStatusError as err:
            outcomes[index] = f"HTTP {err.status}"
        except (OsfClientError, threading.BrokenBarrierError) as err:
            outcomes[index] = f"{type(err).__name__}: {err}"

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@check(
    "R11-concurrent-same-completion",
    f"{CALLERS} identical completions posted at the same moment, on separate connections, "
    "all get HTTP 200 with the final status, and the run shows that completion.",
)
def check_concurrent_same_completion(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    c.start(command_id)
    body = {
        "execution_id": c.execution_id(command_id),
        "status": "completed",
        "result": {"probe": c.nonce},
    }
    token = c.need("desktop_token")
    desktops = [c.relay(token) for _ in range(CALLERS)]
    answers = _together(CALLERS, lambda i: desktops[i].complete(command_id, body))
    c.done(command_id)
    c.decisive()
    for index, answer in enumerate(answers):
        c.expect(
            isinstance(answer, dict) and answer.get("status") == "completed",
            f"simultaneous completion {index + 1} of {CALLERS} was answered {answer!r}; "
            "the same body posted again must get 200 and change nothing",
        )
    view = c.view(command_id)
    c.expect_equal(view.get("status"), "completed", "the run's status after the completions")
    c.expect_equal(view.get("result"), body["result"], "the run's result")
