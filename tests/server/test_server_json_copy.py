"""The server's JSON copy (``_relay_input.copied``): what it stores and answers is its own.

A caller changing an answer, or the value it sent, must never change the server's
state; ``copied`` does that for JSON values without ``copy.deepcopy``
(``benchmarks/bench_json_copy.py``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._relay_input import copied
from pytest_osfoundry.server._tools import TOOLS, tools_listing

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list inside ``value``, itself included."""
    if isinstance(value, dict):
        return [id(value), *(i for item in value.values() for i in _containers(item))]
    if isinstance(value, list):
        return [id(value), *(i for item in value for i in _containers(item))]
    return []


@given(_JSON)
def test_a_copy_is_equal_and_shares_no_container(value: Any) -> None:
    copy_ = copied(value)
    assert copy_ == value
    assert not set(_containers(copy_)) & set(_containers(value))


def test_anything_else_than_json_is_copied_deeply_too() -> None:
    value = {"pair": (1, [2])}
    copy_ = copied(value)
    assert copy_ == value
    assert copy_["pair"][1] is not value["pair"][1]


def test_the_tool_listing_changed_by_a_caller_stays_the_servers() -> None:
    listing = tools_listing()
    listing[0]["inputSchema"]["properties"].clear()
    assert tools_listing() == list(TOOLS)


def test_answers_and_arguments_changed_by_a_caller_leave_the_state_alone() -> None:
    server = ReferenceServer(VirtualClock(), seed=3)
    info = server.provision()
    sessions = [{"graph_session_id": "gs_" + "c" * 32, "slug": "kept"}]
    server.state.share(info.project_id, sessions)
    agent = next(a for a in server.state.agents.values() if a.project_ids)
    listed = server.state.list_graph_sessions(agent, info.project_id)
    listed["sessions"][0]["slug"] = "changed"
    again = server.state.list_graph_sessions(agent, info.project_id)
    assert again["sessions"][0]["slug"] == "kept"
    arguments = {"inputs": {"prompt": "kept"}}
    session_id = sessions[0]["graph_session_id"]
    ticket = server.state.run_graph_session(agent, session_id, "k" * 16, arguments)
    arguments["inputs"]["prompt"] = "changed"
    assert server.state.runs[ticket["command_id"]].arguments == {"inputs": {"prompt": "kept"}}
