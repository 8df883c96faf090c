"""Reports: the terminal summary by area, the JSON and Markdown files, and masking.

A failure must show the requests and responses that led to it and a ``curl`` line
replaying the decisive one; no credential may appear anywhere — terminal, JSON,
Markdown, JUnit XML, baseline file — even with ``-l`` (locals) and ``-rA``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.reporting._results import OUTCOMES
from tests.conformance.osf_conformance_kit import SuiteRun, read, variant_target


def test_failure_shows_exchanges_and_a_replay(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(variant_target("other_agent_cancels"), "-k", "D6-cancel-other-agent or D5")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    run.result.stdout.fnmatch_lines(
        [
            "*_ D6-cancel-other-agent _*",
            "test_access.py:*: in check_cancel_other_agent",
            "E   another agent's cancel of a real command id got a success result, a fresh "
            "UUID got an isError result 'Graph run not found or access removed'",
            "*- osfoundry: the exchanges that led to it -*",
            "POST http://127.0.0.1:*/mcp",
            "Authorization: Bearer ***",
            "*- osfoundry: replay the decisive request -*",
            "curl -sS -X POST http://127.0.0.1:*/mcp *-H 'Authorization: Bearer ***'*",
            "*= osfoundry conformance =*",
            "access",
            "  passed * D5-unknown-run *",
            "  FAILED * D6-cancel-other-agent *another agent's cancel*",
            "1 passed, 1 failed, 0 skipped",
            "*short test summary info*",
            "FAILED test_access.py::D6-cancel-other-agent - another agent's cancel*",
        ]
    )


def test_json_report_shape(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(variant_target("short_key_accepted"), "-k", "D7")
    doc = run.report
    assert set(doc) >= {"suite_version", "spec", "target", "summary", "checks"}
    assert doc["target"] == "embedded:tests.conformance.variants:short_key_accepted"
    assert doc["summary"]["line"] == "4 passed, 1 failed, 0 skipped"
    assert doc["summary"]["failed"] == 1 and doc["summary"]["ok"] is False
    for check in doc["checks"]:
        assert set(check) >= {"id", "rule", "level", "outcome", "message", "exchange"}
        assert check["outcome"] in OUTCOMES
        assert check["rule"] == check["id"].split("-")[0]
        assert check["message"]
    failed = next(c for c in doc["checks"] if c["outcome"] == "failed")
    assert failed["id"] == "D7-key-too-short"
    assert failed["message"] == (
        "a 7-character key: expected an isError result or JSON-RPC error -32602, got a "
        "success result"
    )
    exchange = failed["exchange"]
    assert exchange["curl"].startswith("curl -sS -X POST ")
    assert '"idempotency_key":"kkkkkkk"' in exchange["decisive"]["request"]["body"]
    assert exchange["decisive"]["response"]["status"] == 200
    assert exchange["history"]
    passed = next(c for c in doc["checks"] if c["outcome"] == "passed")
    assert passed["exchange"] is None
    for check in doc["checks"]:  # the rule book file of this install, found from here
        path, _, anchor = check["spec"].partition("#")
        assert Path(path).is_file(), check["spec"]
        assert anchor == check["rule"].lower() and path.endswith("spec.md")


def test_notes_say_which_refusal_shape_was_seen(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "-k", "R3-missing-property")
    (check,) = run.report["checks"]
    assert check["message"].endswith(
        "(get_graph_run without command_id: refused as an isError result)"
    )


def test_markdown_table(pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]) -> None:
    md = pytester.path / "summary" / "osf.md"
    run = run_suite(variant_target("bare_challenge"), "-k", "R2", f"--osf-markdown={md}")
    text = read(md)
    assert text.startswith("## osFoundry conformance: 9 passed, 1 failed, 0 skipped\n")
    assert "| Area | Check | Level | Outcome | Detail |" in text
    assert "| scopes | `R2-unauthenticated-401` | reconstructed | ❌ failed |" in text
    assert "| scopes | `R2-unauthenticated-refused` | documented | ✅ passed |" in text
    assert "### Replays" in text and "curl -sS" in text
    assert f"wrote Markdown summary: {md}" in run.text


def test_quiet_summary_lists_only_what_did_not_pass(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(variant_target("bare_challenge"), "-q", "-k", "R2")
    assert "  passed " not in run.text
    run.result.stdout.fnmatch_lines(
        ["scopes", "  FAILED * R2-unauthenticated-401 *", "9 passed, 1 failed, 0 skipped"]
    )


TOKENS = {
    "agent": "osf-AGENT-9f3c2e1d7b6a5e4f3c2b1a0f",
    "other": "osf-OTHER-1a2b3c4d5e6f7a8b9c0d1e2f",
    "read": "osf-READ-0f1e2d3c4b5a69788796a5b4",
    "desktop": "osf-DESKTOP-5e4d3c2b1a0f9e8d7c6b5a4",
}

LEAKY_FACTORY = f"""
from pytest_osfoundry.http import HandlerWrapper
from tests.conformance import variants


class Server(HandlerWrapper):
    '''Broken three ways (query tokens, foreign reads, agent tokens on the relay) with
    known tokens, so the test can look for them in every output.'''

    mcp_path = "/mcp"

    def __init__(self):
        super().__init__(
            variants._QueryTokenAccepted(
                variants._AgentActsAsDesktop(variants._OtherAgentReadsRun())
            )
        )

    def provision(self):
        return self.inner.provision(
            agent_token={TOKENS["agent"]!r},
            other_agent_token={TOKENS["other"]!r},
            read_token={TOKENS["read"]!r},
            desktop_token={TOKENS["desktop"]!r},
        )
"""


def test_tokens_are_masked_in_every_output(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    pytester.makepyfile(osf_leaky_factory=LEAKY_FACTORY)
    pytester.syspathinsert()
    out = pytester.path / "out"
    run = run_suite(
        "--osf-target=embedded:osf_leaky_factory:Server",
        "-k",
        "R2 or D6 or R12",
        "-v",
        "-rA",
        "-l",
        "--tb=long",
        f"--junitxml={out / 'junit.xml'}",
        f"--osf-markdown={out / 'osf.md'}",
        f"--osf-write-baseline={out / 'baseline.txt'}",
        report="out/osf.json",
    )
    assert run.ids("failed") >= {
        "R2-query-token-refused",
        "D6-get-other-agent",
        "R12-agent-token-403",
    }, run.text[-3000:]
    assert "Bearer ***" in run.text and "access_token=***" in run.text
    outputs = {"stdout+stderr": run.text}
    outputs.update({p.name: read(p) for p in out.iterdir()})
    assert set(outputs) == {"stdout+stderr", "junit.xml", "osf.md", "baseline.txt", "osf.json"}
    for name, text in outputs.items():
        for role, token in TOKENS.items():
            assert token not in text, f"the {role} token leaks into {name}"
            assert token[4:20] not in text, f"part of the {role} token leaks into {name}"
    junit = read(out / "junit.xml")
    assert 'name="osf_check" value="R2-query-token-refused"' in junit
    assert 'name="osf_outcome" value="failed: ' in junit
    specs = re.findall(r'name="osf_spec" value="([^"#]*)#', junit)
    assert specs and all(Path(spec).is_file() for spec in specs), set(specs)


def test_report_survives_xdist(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(variant_target("other_agent_reads_run"), "-n", "2", "-k", "D6 or D5")
    assert run.ids("failed") == {"D6-get-other-agent", "D6-get-other-account"}, run.text[-3000:]
    failed = [c for c in run.report["checks"] if c["outcome"] == "failed"]
    assert all(c["exchange"] and c["exchange"]["curl"].startswith("curl") for c in failed)
    run.result.stdout.fnmatch_lines(
        ["*osfoundry: replay the decisive request*", "5 passed, 2 failed, 0 skipped"]
    )
    json.dumps(run.report)  # plain JSON all the way
