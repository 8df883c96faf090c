"""ACME's own conformance checks: an imaginary server team's rules, run inside the suite.

ACME runs an osFoundry-style server with two rules of its own, beyond the rule book:
every agent of a project sees the same tool list, and every ``tools/call`` answer
says how many calls the agent has left (a ``RateLimit-Remaining`` header). The
checks below use only the suite's public API (``pytest_osfoundry.conformance``):
the same ``osf_conf`` context, roles, exchange capture, reports and baseline as the
rule book's checks. ``conftest.py`` beside this file tells the suite where they are.

The kit's reference server (``--osf-target=embedded``) has no rate limits, so
``X-ACME-rate-limit-remaining`` fails against it: ``acme-baseline.txt`` lists it as
a known failure, which is how a team gates CI on everything else.
"""

from __future__ import annotations

from pytest_osfoundry.conformance import Conformance, ExtraRule, check

TOOLS_RULE = ExtraRule(
    "X-ACME",
    title="ACME's own rules for its osFoundry server",
    why="ACME's agents and dashboards rely on them beyond the osFoundry rules",
    spec="https://acme.example/docs/osfoundry-server#rules",
    level="documented",
    area="acme",
)

RATE_LIMIT_HEADER = "RateLimit-Remaining"
"""ACME's own header (the team's copy of what it asserts)."""


def _tool_names(listing: object) -> list[str]:
    if not isinstance(listing, list):
        return []
    return sorted(str(tool.get("name")) for tool in listing if isinstance(tool, dict))


@check(
    "X-ACME-same-tools-for-every-agent",
    "Two agents of the same project see the same tools, by name.",
    rule=TOOLS_RULE,
)
def check_same_tools(osf_conf: Conformance) -> None:
    c = osf_conf
    mine = _tool_names(c.roles.agent.list_tools())
    theirs = _tool_names(c.roles.other_agent.list_tools())
    c.wire.decisive()
    c.expect(mine, "the agent's tool list is empty")
    c.expect.equal(theirs, mine, "the other agent's tool names")


@check(
    "X-ACME-rate-limit-remaining",
    f"Every tools/call answer carries a {RATE_LIMIT_HEADER} header with a whole number.",
    rule=TOOLS_RULE,
)
def check_rate_limit_remaining(osf_conf: Conformance) -> None:
    c = osf_conf
    reply = c.agent.call("list_graph_sessions", {"project_id": c.roles.project_id})
    c.wire.decisive()
    headers = {name.lower(): value for name, value in reply.headers.items()}
    value = headers.get(RATE_LIMIT_HEADER.lower())
    c.expect(
        value is not None and value.strip().isdigit(),
        f"the tools/call answer's {RATE_LIMIT_HEADER} header should be a whole number, "
        f"got {value!r}",
    )
