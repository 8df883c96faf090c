"""D7 and A5 from the agent's side: idempotency keys, and the same key after a lost reply.

Every start carries a key of 8-128 characters; after the reply to the first start is
lost (the server applied it, then dropped the connection unanswered) the agent asks
again with the same key and arguments, and exactly one run is queued; two intended
runs (two starts of the agent) use two keys.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentFault, McpCall


def _asked(call: McpCall) -> tuple[Any, Any, Any]:
    arguments = call.arguments or {}
    return (
        arguments.get("graph_session_id"),
        arguments.get("idempotency_key"),
        arguments.get("arguments"),
    )


@check(
    "D7-agent-key-length",
    "Every run_graph_session the agent sends carries an idempotency_key of 8-128 "
    "characters, and the run it queues is reported as the server has it.",
    area="agent",
)
def check_key_length(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    outcome = conf.run(conf.run_task())
    starts = conf.calls("run_graph_session")
    conf.expect(bool(starts), "the agent never called run_graph_session")
    for call in starts:
        key = (call.arguments or {}).get("idempotency_key")
        conf.expect(
            isinstance(key, str) and 8 <= len(key) <= 128,
            f"a start carried the idempotency_key {key!r}: D7 asks for 8-128 characters",
        )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "A5-same-key-after-lost-reply",
    "After the reply to its first start is lost (applied, then the connection dropped), "
    "the agent asks again with the same key, session and arguments; exactly one run is "
    "queued and reported.",
)
def check_same_key_after_lost_reply(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("run_graph_session", "drop-after"))
    outcome = conf.run(conf.run_task())
    starts = conf.calls("run_graph_session")
    conf.measures["starts"] = len(starts)
    conf.expect(
        len(starts) >= 2,
        f"the agent sent {len(starts)} start(s): after a lost reply it must ask again "
        "(the start may have been applied; the same key makes asking safe)",
    )
    first = _asked(starts[0])
    for call in starts[1:]:
        conf.expect(
            _asked(call) == first,
            f"the retry asked {_asked(call)!r} after {first!r}: a start whose reply was lost "
            "is asked again with the same key, session and arguments",
        )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "A5-fresh-key-per-run",
    "Two intended runs (the agent started twice with the same task) are queued with two "
    "different keys: two runs, each reported.",
)
def check_fresh_key_per_run(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = conf.run_task()
    first = conf.run(task)
    keys_first = {
        (c.arguments or {}).get("idempotency_key") for c in conf.calls("run_graph_session")
    }
    # A new intended run, not a restart: the saved state of the first is not the second's.
    conf.new_state_dir()
    second = conf.run(task)
    keys_all = {(c.arguments or {}).get("idempotency_key") for c in conf.calls("run_graph_session")}
    keys_second = keys_all - keys_first
    conf.expect(
        bool(keys_second),
        f"the second intended run reused the key {sorted(map(str, keys_first))[:2]}: each "
        "intended run needs a fresh key (a hard-coded or derived key replays the first run)",
    )
    runs = conf.runs()
    conf.expect(len(runs) == 2, f"two intended runs queued {len(runs)} run(s)")
    conf.expect_reported(first, runs[0])
    conf.expect_reported(second, runs[1])
