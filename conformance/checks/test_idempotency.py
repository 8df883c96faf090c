"""Idempotency: the key's bounds and retries (D7), keys belonging to one agent (R5),
simultaneous retries (R5) and simultaneous identical completions (R11).

"Nothing queued" is checked the way the desktop would see it: every refused call
carries unique ``arguments``, and the next sync must deliver no command with them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.client import HttpStatusError, OsfClientError, ToolReply
from pytest_osfoundry.conformance import Conformance, check, decode_reply
from pytest_osfoundry.conformance.expected import COMPLETED, KEY_CONFLICT, KEY_MAX, KEY_MIN, QUEUED

#: Simultaneous calls in the concurrency checks, each on its own connection.
CALLERS = 8


def _refused_key(conf: Conformance, key: Any, what: str, *, omit: bool = False) -> None:
    __tracebackhide__ = True
    conf.desktop.sync()
    args = conf.agent.run_args(key=key)
    if omit:
        del args["idempotency_key"]
    out = conf.agent.run(args)
    conf.wire.decisive()
    conf.expect.schema_refusal(out, what)
    conf.desktop.expect_nothing_queued(args["arguments"], f"{what} was refused")


@check(
    "D7-key-required", "run_graph_session without idempotency_key is refused and queues nothing."
)
def check_key_required(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, None, "a call without idempotency_key", omit=True)


@check("D7-key-too-short", "A 7-character idempotency_key is refused and queues nothing.")
def check_key_too_short(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, "k" * (KEY_MIN - 1), f"a {KEY_MIN - 1}-character key")


@check("D7-key-too-long", "A 129-character idempotency_key is refused and queues nothing.")
def check_key_too_long(osf_conf: Conformance) -> None:
    _refused_key(osf_conf, "k" * (KEY_MAX + 1), f"a {KEY_MAX + 1}-character key")


@check("D7-key-bounds", "8- and 128-character idempotency keys are accepted.")
def check_key_bounds(osf_conf: Conformance) -> None:
    c = osf_conf
    for length in (KEY_MIN, KEY_MAX):
        key = (c.agent.nonce + c.agent.new_key() * 5)[:length]
        ticket = c.agent.queue(key=key)
        c.expect.equal(ticket.get("status"), QUEUED, f"status with a {length}-character key")


@check(
    "D7-retry-same-key",
    "Retrying run_graph_session with the same key and arguments returns the same command "
    "id and queues one run only.",
)
def check_retry_same_key(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.agent.new_key(), c.agent.probe()
    first = c.agent.queue(key=key, arguments=probe)
    again = c.agent.queue(key=key, arguments=probe)
    c.wire.decisive()
    c.expect.equal(again.get("command_id"), first["command_id"], "the retry's command_id")
    delivered = c.desktop.commands_with(c.desktop.sync(), probe)
    c.expect.equal(len(delivered), 1, "commands the desktop gets for the two calls")


@check(
    "R5-different-arguments",
    "The same key with different arguments is refused with 'idempotency_key was already "
    "used with different arguments' and queues nothing.",
)
def check_different_arguments(osf_conf: Conformance) -> None:
    c = osf_conf
    key = c.agent.new_key()
    c.agent.queue(key=key, arguments=c.agent.probe())
    other = c.agent.probe()
    out = c.agent.run(c.agent.run_args(key=key, arguments=other))
    c.wire.decisive()
    c.expect.error(out, KEY_CONFLICT, "the same key with different arguments")
    c.desktop.expect_nothing_queued(other, "the conflicting call was refused")


@check(
    "R5-different-session",
    "The same key for another session is refused with the idempotency_key error and "
    "queues nothing.",
)
def check_different_session(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.agent.new_key(), c.agent.probe()
    c.agent.queue(key=key, arguments=probe)
    out = c.agent.run(c.agent.run_args(session=c.roles.sessions[2], key=key, arguments=probe))
    c.wire.decisive()
    c.expect.error(out, KEY_CONFLICT, "the same key for another session")
    delivered = c.desktop.commands_with(c.desktop.sync(), probe)
    c.expect.equal(len(delivered), 1, "commands queued with the key")


@check(
    "R5-key-per-agent",
    "Another agent using the same key and arguments gets its own run and never sees the "
    "first agent's command id.",
)
def check_key_per_agent(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.agent.new_key(), c.agent.probe()
    other = c.roles.other_agent
    first = c.agent.queue(key=key, arguments=probe)["command_id"]
    out = c.agent.run(c.agent.run_args(key=key, arguments=probe), by=other)
    c.wire.decisive()
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
    delivered = c.desktop.commands_with(c.desktop.sync(), probe)
    c.expect.equal(len(delivered), 2, "runs queued by the two agents with one key")


def _together(count: int, call: Callable[[int], Any]) -> list[Any]:
    """``call(index)`` made by ``count`` threads released at once; each one's outcome
    (a client error is its text; anything else a call raised is raised here, as if the
    check had made the call itself: the run stopping, a bug)."""
    barrier = threading.Barrier(count)
    outcomes: list[Any] = ["no answer"] * count
    raised: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            outcomes[index] = call(index)
        except HttpStatusError as err:
            outcomes[index] = f"HTTP {err.status}"
        except (OsfClientError, threading.BrokenBarrierError) as err:
            outcomes[index] = f"{type(err).__name__}: {err}"
        except BaseException as err:
            raised.append(err)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if raised:
        raise raised[0]
    return outcomes


@check(
    "R5-concurrent-same-key",
    f"{CALLERS} simultaneous run_graph_session calls with one key and the same arguments, "
    "on separate connections, queue one run: every success carries the same command id.",
    # its calls must overlap each other, not queue behind other checks'; only the calls
    # wait for that (with c.alone():), the sync and the clients are made alongside
    schedule="alone-within",
)
def check_concurrent_same_key(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    args = c.agent.run_args()
    token = c.roles.need("agent_token")
    clients = [c.wire.initialized(c.roles.mcp(token)) for _ in range(CALLERS)]
    with c.alone():
        answers: list[ToolReply | str] = _together(
            CALLERS, lambda i: decode_reply(clients[i].call_tool_raw("run_graph_session", args))
        )
    c.wire.decisive()
    command_ids: set[str] = set()
    for index, out in enumerate(answers):
        if isinstance(out, str):
            c.expect.fail(f"simultaneous call {index + 1} of {CALLERS} got no answer: {out}")
        if out.kind == "tool_error":
            continue  # a refusal of a concurrent duplicate is allowed
        command_id = out.structured.get("command_id") if out.structured else None
        c.expect(
            out.kind == "result" and isinstance(command_id, str),
            f"simultaneous call {index + 1} of {CALLERS} answered {out.describe()}",
        )
        assert isinstance(command_id, str)
        command_ids.add(command_id)
        c.runs.track(clients[index], command_id)
    delivered = c.desktop.commands_with(c.desktop.sync(), args["arguments"])
    for command in delivered:
        if isinstance(command.get("command_id"), str):
            c.runs.track(c.roles.agent, str(command["command_id"]))
    c.expect(
        len(command_ids) <= 1,
        f"{CALLERS} simultaneous calls with one key got {len(command_ids)} different "
        "command ids: the key's look-up and insert are not atomic",
    )
    c.expect.equal(len(delivered), 1, f"commands the desktop gets for {CALLERS} simultaneous calls")


@check(
    "R11-concurrent-same-completion",
    f"{CALLERS} identical completions posted at the same moment, on separate connections, "
    "all get HTTP 200 with the final status, and the run shows that completion.",
    schedule="long-chain",
)
def check_concurrent_same_completion(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.desktop.start(command_id)
    body = c.desktop.completion(command_id, COMPLETED, result={"probe": c.agent.nonce})
    token = c.roles.need("desktop_token")
    desktops = [c.roles.relay(token) for _ in range(CALLERS)]
    answers = _together(CALLERS, lambda i: desktops[i].complete(command_id, body))
    c.runs.done(command_id)
    c.wire.decisive()
    for index, answer in enumerate(answers):
        c.expect(
            isinstance(answer, dict) and answer.get("status") == COMPLETED,
            f"simultaneous completion {index + 1} of {CALLERS} was answered {answer!r}; "
            "the same body posted again must get 200 and change nothing",
        )
    view = c.agent.view(command_id)
    c.expect.equal(view.get("status"), COMPLETED, "the run's status after the completions")
    c.expect.equal(view.get("result"), body["result"], "the run's result")
