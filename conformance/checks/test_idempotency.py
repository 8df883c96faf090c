"""Idempotency: the key's bounds and retries (D7), keys belonging to one agent (R5).

"Nothing queued" is checked the way the desktop would see it: every refused call
carries unique ``arguments``, and the next sync must deliver no command with them.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance._harness import Conformance
from pytest_osfoundry.conformance._registry import check

KEY_CONFLICT = "idempotency_key was already used with different arguments"


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
