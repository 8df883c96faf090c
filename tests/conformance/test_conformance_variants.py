"""The broken variants are built from the server's public surface only (issue 9, item 6).

Each variant wraps the HTTP app of a plain ``ReferenceServer``; none may import a
private module of the package or a private name from a public one, so refactoring the
server's insides cannot break them. (That each fails exactly its checks is
``test_conformance_teeth``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_osfoundry.http import Request
from tests.conformance import variants
from tests.conformance.osf_variant_kit import Wrapped, structured, tool_result

_HERE = Path(__file__).parent


@pytest.mark.parametrize("module", ["variants.py", "osf_variant_kit.py"])
def test_variants_use_public_names_of_the_package_only(module: str) -> None:
    tree = ast.parse((_HERE / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_osfoundry"):
            parts = (node.module or "").split(".")
            assert not any(p.startswith("_") for p in parts), node.module
            assert not any(a.name.startswith("_") for a in node.names), node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert not any(p.startswith("_") for p in alias.name.split(".")), alias.name


def test_every_variant_is_a_wrapper_around_the_reference_server() -> None:
    for variant in {**variants.VARIANTS, **variants.TIMING_VARIANTS}.values():
        assert isinstance(variant.factory(), Wrapped), variant.name


def test_wrappers_stack_and_share_one_provisioning() -> None:
    server = variants._QueryTokenAccepted(variants._OtherAgentReadsRun())
    made = server.provision(agent_token="osf-agent-token-fixed")
    assert made.agent_token == "osf-agent-token-fixed"
    inner = server.inner
    assert isinstance(inner, Wrapped) and inner.made is made
    assert server.mcp_path == inner.mcp_path == "/mcp"


def test_a_wrapper_answers_as_the_reference_server_until_it_breaks_a_rule() -> None:
    server = Wrapped()
    made = server.provision()
    body = (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_graph_sessions",'
        b'"arguments":{"project_id":"' + made.project_id.encode() + b'"}}}'
    )
    headers = {"authorization": f"Bearer {made.agent_token}", "content-type": "application/json"}
    reply = server(Request("POST", "/mcp", headers, body))
    assert structured(reply) == {"project_id": made.project_id, "sessions": []}
    rebuilt = tool_result(7, {"project_id": made.project_id, "sessions": []})
    assert rebuilt.json() == reply.json()


def test_a_wrapper_calls_tools_on_a_session_of_its_own_from_a_relay_request() -> None:
    server = Wrapped()
    made = server.provision()
    relay = Request("GET", "/external-assistants/graph-relays/sync", {}, b"")
    args = {"project_id": made.project_id}
    reply = server.call_tool(relay, made.agent_token, "list_graph_sessions", args)
    assert structured(reply) == {"project_id": made.project_id, "sessions": []}
    session = server._sessions[made.agent_token]
    assert session.get("mcp-session-id")
    server.call_tool(relay, made.agent_token, "list_graph_sessions", args)
    assert server._sessions[made.agent_token] is session  # opened once per agent
    server.call_tool(relay, made.other_agent_token, "list_graph_sessions", args)
    assert server._sessions[made.other_agent_token] != session  # each agent its own
