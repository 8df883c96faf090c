"""The suite's parts on their own: options, targets, baselines, registry, decoding, docs."""

from __future__ import annotations

import ast
import json
from importlib import resources
from pathlib import Path

import pytest

from pytest_osfoundry._ids import is_graph_session_id
from pytest_osfoundry.client import HttpTransport
from pytest_osfoundry.conformance.plugin._setup import CHECKS_DIR
from pytest_osfoundry.conformance.reporting._baseline import (
    BaselineError,
    parse_baseline,
    read_baseline,
    write_baseline,
)
from pytest_osfoundry.conformance.reporting._results import Summary
from pytest_osfoundry.conformance.rulesdoc import render_rules_doc
from pytest_osfoundry.conformance.server._challenge import challenge_params
from pytest_osfoundry.conformance.server._sessions import (
    extra_sessions,
    fixed_sessions,
    overflow_sessions,
    unshared_session_id,
)
from pytest_osfoundry.conformance.server._target import (
    TargetError,
    describe_target,
    origin_of,
    parse_target,
)
from pytest_osfoundry.conformance.server._wire import decode_reply
from pytest_osfoundry.conformance.suite._expect import is_utc_timestamp
from pytest_osfoundry.conformance.suite._layout import RULEBOOK_PACKAGE
from pytest_osfoundry.conformance.suite._options import OPTIONS, Settings, env_name
from pytest_osfoundry.conformance.suite._registry import (
    AREAS,
    RULES,
    RULES_FILE,
    RulesFileError,
    all_checks,
    check,
    parse_rules,
)
from pytest_osfoundry.conformance.suite._stats import mann_whitney_z
from pytest_osfoundry.http import Response
from tests.conformance import variants

DOCS = Path(__file__).resolve().parents[2] / "docs"


# ---------------------------------------------------------------------- options
def test_every_option_has_an_osf_environment_variable() -> None:
    assert env_name("--osf-agent-token") == "OSF_AGENT_TOKEN"
    for spec in OPTIONS:
        assert spec.flag.startswith("--osf-")
        assert spec.env == spec.flag[2:].replace("-", "_").upper()


def test_settings_read_options_then_environment() -> None:
    env = {
        "OSF_AGENT_TOKEN": "from-env",
        "OSF_TARGET": "embedded",
        "OSF_TIMING": "yes",
        "OSF_TIMING_SAMPLES": "12",
    }
    settings = Settings.from_values({"osf_agent_token": "from-cli"}, env)
    assert settings.osf_agent_token == "from-cli"
    assert settings.osf_target == "embedded" and settings.active
    assert settings.osf_timing is True and settings.osf_timing_samples == 12
    assert settings.osf_project_id is None
    assert settings.osf_level == "all"
    assert "from-cli" not in repr(settings) and "***" in repr(settings)
    assert settings.secrets() == ["from-cli"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OSF_LEVEL": "some"}, "OSF_LEVEL: expected 'documented' or 'all'"),
        ({"OSF_TIMING": "maybe"}, "OSF_TIMING: expected 1/0"),
        ({"OSF_TIMING_SAMPLES": "x"}, "OSF_TIMING_SAMPLES: expected a whole number"),
        ({"OSF_TIMEOUT": "0"}, "OSF_TIMEOUT: must be at least 1"),
        ({"OSF_PROJECT_ID": "  "}, "OSF_PROJECT_ID is set but empty"),
        ({"OSF_STRICT": ""}, "OSF_STRICT is set but empty"),
    ],
)
def test_bad_values_name_their_source(env: dict[str, str], message: str) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        Settings.from_values({}, env)


# ---------------------------------------------------------------------- targets
def test_target_specs() -> None:
    assert parse_target("embedded") == ("embedded", None)
    assert parse_target("embedded:pkg.mod:make") == ("embedded", "pkg.mod:make")
    assert parse_target("https://osf.example/mcp") == ("url", "https://osf.example/mcp")
    for bad in ("embedded:", "embedded:mod", "embedded:a:b:c", "ftp://x/y", "osf.example/mcp",
                "http://osf.example:port/mcp", "http://user@/mcp"):
        with pytest.raises(TargetError):
            parse_target(bad)


def test_origin_and_description_hide_secrets() -> None:
    assert origin_of("https://user:pw@Osf.Example:8443/a/mcp?x=1") == "https://osf.example:8443"
    settings = Settings(
        osf_target="https://user:pw@osf.example/mcp?access_token=abc", osf_agent_token="abc"
    )
    label = describe_target(settings)
    assert "pw" not in label and "abc" not in label
    assert label.startswith("https://osf.example/mcp?access_token=")


# ---------------------------------------------------------------------- baselines
def test_baseline_parsing(tmp_path: Path) -> None:
    base = parse_baseline(
        "# head\n\nD6-get-other-agent   # why\nR11-oversized-413\nD6-get-other-agent\n"
    )
    assert base.ids == ("D6-get-other-agent", "R11-oversized-413")
    assert "R11-oversized-413" in base
    with pytest.raises(BaselineError, match=r"<baseline>:1: 'D6 get' is not a check id"):
        parse_baseline("D6 get\n")
    path = tmp_path / "deep" / "b.txt"
    write_baseline(
        path, ["R11-oversized-413", "D10-sync-replaces", "D6-get-other-agent"], ["a header"]
    )
    assert path.read_text() == (
        "# a header\nD6-get-other-agent\nD10-sync-replaces\nR11-oversized-413\n"
    )
    assert read_baseline(path).ids == (
        "D6-get-other-agent",
        "D10-sync-replaces",
        "R11-oversized-413",
    )
    with pytest.raises(BaselineError, match="cannot read baseline"):
        read_baseline(tmp_path / "missing")


def test_summary_line() -> None:
    assert (
        Summary(41, 2, 1, 3, (), ()).line()
        == "41 passed, 2 failed (1 failed as expected), 3 skipped"
    )
    assert Summary(5, 0, 0, 0, (), ()).line() == "5 passed, 0 failed, 0 skipped"
    stale = Summary(5, 0, 0, 0, ("D5-unknown-run",), ())
    assert stale.line().endswith(", 1 stale baseline entry") and not stale.ok


# ---------------------------------------------------------------------- registry
def test_every_check_is_well_formed() -> None:
    checks = all_checks()
    ids = [c.check_id for c in checks]
    assert len(ids) == len(set(ids)) >= 100
    for info in checks:
        assert info.check_id.split("-")[0] == info.rule
        assert info.area in AREAS
        assert info.level in ("documented", "reconstructed")
        assert info.asserts.endswith(".")
        assert info.spec == f"pytest_osfoundry/conformance/rulebook/spec.md#{info.rule.lower()}"
    rules = {c.rule for c in checks}
    assert {f"D{n}" for n in (1, 3, 4, 5, 6, 7, 8, 9, 10, 13, 18)} <= rules
    assert {f"R{n}" for n in range(1, 14)} <= rules
    assert rules <= set(RULES)
    for info in checks:
        if info.rule.startswith("D"):
            assert info.level == "documented" or info.rule in ("D3", "D10")


def test_check_decorator_refuses_bad_declarations() -> None:
    with pytest.raises(ValueError, match="known rule"):
        check("D99-nope", "Says something.")
    with pytest.raises(ValueError, match="known rule"):
        check("D6_underscore", "Says something.")
    with pytest.raises(ValueError, match="one sentence"):
        check("D6-empty", "  ")
    with pytest.raises(ValueError, match="unknown area"):
        check("D6-area", "Says something.", area="elsewhere")


def test_checks_ship_in_the_package() -> None:
    names = sorted(p.name for p in CHECKS_DIR.glob("test_*.py"))
    assert names == [
        "test_access.py",
        "test_cancel.py",
        "test_idempotency.py",
        "test_queue.py",
        "test_recheck.py",
        "test_relay_api.py",
        "test_schema.py",
        "test_schema_rpc.py",
        "test_scopes.py",
        "test_transport.py",
        "test_truncation.py",
        "test_types.py",
        "test_wire_schema.py",
    ]
    assert (CHECKS_DIR / "__init__.py").exists()


def test_every_check_has_its_rule_in_the_data_file_and_every_rule_a_check() -> None:
    text = (resources.files(RULEBOOK_PACKAGE) / RULES_FILE).read_text("utf-8")
    described = set(parse_rules(text))
    checked = {c.rule for c in all_checks(include_relay=True)}
    assert checked - described == set(), "checks of rules missing from rules.toml"
    assert described - checked == set(), "rules in rules.toml that no check checks"
    assert described == set(RULES)


_RULE = """
reconstructed_source = "the kit's reconstruction"
[rules.R4]
title = "The ticket"
spec = "conformance/spec.md#r4"
area = "queue"
why = "Agents read it."
"""


def test_rules_file_is_parsed_with_levels_and_default_source() -> None:
    rule = parse_rules(_RULE)["R4"]
    assert (rule.level, rule.area, rule.source, rule.how) == (
        "reconstructed",
        "queue",
        "the kit's reconstruction",
        None,
    )
    assert parse_rules(_RULE.replace("R4", "D4"))["D4"].level == "documented"
    sourced = parse_rules(_RULE + 'source = "a live response"\nhow = "By reading it."\n')["R4"]
    assert (sourced.source, sourced.how) == ("a live response", "By reading it.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[rules", "rules.toml: not valid TOML"),
        (_RULE.replace("reconstructed_source", "source"), "reconstructed_source must be"),
        ('reconstructed_source = "x"\n', "no \\[rules.<ID>\\] tables"),
        (_RULE.replace("R4", "X4"), "\\[rules.X4\\] is not a rule id"),
        (_RULE.replace('why = "Agents read it."', ""), "\\[rules.R4\\] needs a non-empty why"),
        (_RULE.replace('"Agents read it."', '"  "'), "needs a non-empty why"),
        (_RULE + "how = 5\n", "needs a non-empty how"),
        (_RULE + 'notes = "x"\n', "unknown fields \\['notes'\\]"),
        (_RULE.replace('"queue"', '"elsewhere"'), "area 'elsewhere' is not one of"),
    ],
)
def test_rules_file_errors_name_the_rule_and_field(text: str, message: str) -> None:
    with pytest.raises(RulesFileError, match=message):
        parse_rules(text)


def test_expected_texts_are_the_suites_own() -> None:
    """expected.py imports nothing of the kit: a wrong server constant is not mirrored."""
    source = resources.files("pytest_osfoundry.conformance") / "expected.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert imported and all(name in ("__future__", "typing") for name in imported), imported


def test_rules_doc_is_up_to_date() -> None:
    assert (DOCS / "rules.md").read_text(encoding="utf-8") == render_rules_doc(), (
        "regenerate: python -m pytest_osfoundry.conformance.rulesdoc docs/rules.md"
    )


def test_rules_doc_names_every_check_and_rule() -> None:
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    for info in all_checks():
        assert f"**`{info.check_id}`**" in text
    for rule in RULES:
        assert f"### {rule}\n" in text


# ---------------------------------------------------------------------- shared sessions
def test_fixed_sessions_are_deterministic_and_disjoint() -> None:
    a, b = fixed_sessions("p1"), fixed_sessions("p1")
    assert a == b and fixed_sessions("p2") != a
    every = a + extra_sessions("p1") + overflow_sessions("p1", 101)
    ids = [s["graph_session_id"] for s in every] + [unshared_session_id("p1")]
    assert len(ids) == len(set(ids)) == 3 + 97 + 101 + 1
    assert all(is_graph_session_id(i) for i in ids)
    assert len(a + extra_sessions("p1")) == 100


def test_utc_timestamps() -> None:
    assert is_utc_timestamp("2026-11-08T00:00:20.000Z")
    assert is_utc_timestamp("2026-11-08T00:00:20+00:00")
    assert not is_utc_timestamp("2026-11-08T00:00:20+01:00")
    assert not is_utc_timestamp("2026-11-08 00:00:20")
    assert not is_utc_timestamp(None)


# ---------------------------------------------------------------------- decoding
def _reply(payload: object, status: int = 200, sse: bool = False) -> Response:
    text = json.dumps(payload)
    if sse:
        return Response(
            status,
            {"Content-Type": "text/event-stream"},
            f": hi\nevent: message\ndata: {text}\n\n".encode(),
        )
    return Response(status, {"content-type": "application/json; charset=utf-8"}, text.encode())


def test_decode_reply_kinds() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": '{"a":1}'}]}}
    out = decode_reply(_reply(ok))
    assert out.kind == "result" and out.structured == {"a": 1} and not out.refused
    sse = decode_reply(_reply(ok, sse=True))
    assert sse.kind == "result" and sse.raw == json.dumps(ok).encode()
    err = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "nope"}], "isError": True},
    }
    assert decode_reply(_reply(err)).message == "nope"
    rpc = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}
    out = decode_reply(_reply(rpc))
    assert (out.kind, out.code, out.message) == ("rpc_error", -32602, "bad")
    out = decode_reply(_reply(rpc, status=400))
    assert (out.kind, out.code) == ("http_error", -32602)
    assert out.describe() == "HTTP 400 (JSON-RPC error -32602 'bad')"
    assert decode_reply(Response(200, {}, b"hello")).kind == "malformed"
    assert decode_reply(Response(401, {}, b"")).refused


def test_challenge_params() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="osfoundry:run", '
        'resource_metadata="https://x.example/.well-known/oauth-protected-resource"'
    )
    assert challenge_params(header) == {
        "error": "insufficient_scope",
        "scope": "osfoundry:run",
        "resource_metadata": "https://x.example/.well-known/oauth-protected-resource",
    }
    assert challenge_params("Bearer realm=osf") == {"realm": "osf"}
    assert challenge_params("Basic realm=x") is None
    assert challenge_params(None) is None


def test_mann_whitney() -> None:
    same = [1.0, 2.0, 3.0, 4.0] * 10
    assert abs(mann_whitney_z(same, same)) < 1e-9
    slow = [v + 100 for v in same]
    assert mann_whitney_z(slow, same) > 4


# ---------------------------------------------------------------------- variants
def test_variants_are_documented_factories() -> None:
    for variant in {**variants.VARIANTS, **variants.TIMING_VARIANTS}.values():
        assert variant.factory.__doc__, variant.name
        assert getattr(variants, variant.name) is variant.factory
        assert variant.target == f"embedded:tests.conformance.variants:{variant.name}"
        server = variant.factory()
        assert callable(server) and callable(server.provision)


@pytest.mark.parametrize("concurrency", [1, 120])
def test_the_suite_sends_through_one_bounded_transport_keeping_a_connection_per_check(
    concurrency: int,
) -> None:
    """Every request goes through one HttpTransport bounded by the options, keeping
    a connection open for every check in flight (a closed one costs a round trip to
    reopen far away, a TLS one more)."""
    from pytest_osfoundry.conformance.server._target import KEEP_ALIVE_SPARE, resolve_target

    settings = Settings(
        osf_target="embedded", osf_concurrency=concurrency, osf_timeout=7, osf_max_response=3
    )
    target = resolve_target(settings)
    try:
        transport = target.transport
        assert isinstance(transport, HttpTransport)
        assert (transport.timeout, transport.max_bytes) == (7.0, 3 * 1024 * 1024)
        assert transport.keep == concurrency + KEEP_ALIVE_SPARE
        reply = transport.request(
            "GET", target.origin + "/.well-known/oauth-protected-resource", {}, b""
        )
        assert reply.status == 200
    finally:
        target.close()
