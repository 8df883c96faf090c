"""Idempotency: the key's bounds and retries (D7), keys belonging to one agent (R5).

"Nothing queued" is checked the way the desktop would see it: every refused call
carries unique ``arguments``, and the next sync must deliver no command with them.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance._expected import KEY_CONFLICT, KEY_MAX, KEY_MIN, QUEUED
from pytest_osfoundry.conformance._harness import Conformance
from pytest_osfoundry.conformance._registry import check


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
