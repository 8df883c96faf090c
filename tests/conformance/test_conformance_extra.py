"""A project's own checks (the public API of ``pytest_osfoundry.conformance``).

The example ``examples/extra_checks`` (an imaginary team's conftest and check
module) runs against ``embedded`` in pytester: its checks join the rule book's in
one run, with the same ids, levels, areas, reports and baseline. The rest pins the
API's refusals: every one names what was wrong.
"""

from __future__ import annotations

import ast
import inspect
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_osfoundry.conformance as public
from pytest_osfoundry.conformance.reporting._baseline import BaselineError, parse_baseline
from pytest_osfoundry.conformance.suite._checkids import rule_of
from pytest_osfoundry.conformance.suite._extra import ExtraRule, ExtraRuleError
from pytest_osfoundry.conformance.suite._registry import CheckInfo, check, check_info, sort_key
from tests.conformance.osf_conformance_kit import SuiteRun

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extra_checks"
ACME = ("X-ACME-same-tools-for-every-agent", "X-ACME-rate-limit-remaining")


def _rule(rule_id: str = "X-TEAM", **changes: str) -> ExtraRule:
    fields = {"title": "the team's rule", "why": "they need it", "spec": "docs/team.md#x"}
    fields.update(changes)
    return ExtraRule(rule_id, **fields)  # type: ignore[arg-type]


@pytest.fixture
def acme(pytester: pytest.Pytester) -> Path:
    """The example copied into pytester's folder (its conftest is the run's)."""
    for name in ("conftest.py", "acme_checks.py", "acme-baseline.txt"):
        shutil.copy(EXAMPLE / name, pytester.path / name)
    return pytester.path


def test_the_example_runs_inside_the_suite(acme: Path, run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "-k", "X-ACME or D3")
    entries = {c["id"]: c for c in run.report["checks"]}
    assert set(ACME) <= set(entries), run.text
    assert any(i.startswith("D3-") for i in entries), "the rule book ran too"
    same, limit = (entries[i] for i in ACME)
    assert same["outcome"] == "passed" and same["requests"] >= 2
    assert limit["outcome"] == "failed"
    assert "RateLimit-Remaining" in limit["message"]
    assert limit["exchange"]["curl"].startswith("curl ")
    for entry in (same, limit):
        assert entry["rule"] == "X-ACME"
        assert entry["level"] == "documented"
        assert entry["area"] == "acme"
        assert entry["spec"] == "https://acme.example/docs/osfoundry-server#rules"
        assert entry["nodeid"] == f"acme_checks.py::{entry['id']}"
    order = [c["id"] for c in run.report["checks"]]
    assert order.index(ACME[0]) > max(i for i, c in enumerate(order) if c.startswith("D3-"))
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert "acme\n" in run.text and "FAILED            X-ACME-rate-limit-remaining" in run.text


def test_the_example_honours_its_baseline(acme: Path, run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "--osf-baseline=acme-baseline.txt", "-k", "X-ACME")
    assert run.outcomes == {ACME[0]: "passed", ACME[1]: "xfailed"}, run.text
    assert run.report["summary"]["ok"] is True
    assert run.report["summary"]["unknown_baseline_entries"] == []
    assert run.result.ret == pytest.ExitCode.OK


def test_a_passing_extra_check_in_the_baseline_is_stale(
    acme: Path, run_suite: Callable[..., SuiteRun]
) -> None:
    (acme / "stale.txt").write_text(f"{ACME[0]}\n", encoding="utf-8")
    run = run_suite("--osf-target=embedded", "--osf-baseline=stale.txt", "-k", "X-ACME")
    assert run.outcomes[ACME[0]] == "xpassed"
    assert run.report["summary"]["stale_baseline_entries"] == [ACME[0]]
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_ini_option_names_extra_checks(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    (pytester.path / "team").mkdir()
    shutil.copy(EXAMPLE / "acme_checks.py", pytester.path / "team" / "acme_checks.py")
    pytester.makeini("[pytest]\nosf_extra_checks = team/acme_checks.py\n")
    run = run_suite("--osf-target=embedded", "-k", "X-ACME")
    assert set(run.outcomes) == set(ACME), run.text


def test_a_missing_extra_path_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nosf_extra_checks = nowhere/checks.py\n")
    result = pytester.runpytest("--osf-target=embedded")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "osf_extra_checks" in result.stderr.str() and "does not exist" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_a_hook_returning_no_path_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_osf_extra_checks(config):\n    return [42]\n")
    result = pytester.runpytest("--osf-target=embedded")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "pytest_osf_extra_checks returned 42" in result.stderr.str()


def test_the_example_uses_only_the_public_api() -> None:
    for path in sorted(EXAMPLE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in (n for n in names if n != "__future__"):
                assert not any(part.startswith("_") for part in name.split(".")), (path, name)


def test_the_declarations_the_guide_names_are_checks_parameters() -> None:
    """Every ``@check`` declaration docs/extra-checks.md names (``name=True``,
    ``name="..."``, or a keyword inside ``@check(...)``) is a parameter of
    :func:`check`, so the guide cannot teach a declaration that does not exist."""
    guide = (EXAMPLE.parents[1] / "docs" / "extra-checks.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\w+)=(?:True|False|\"[^\"`]*\")`", guide))
    for call in re.findall(r"@check\(([^)]*)\)", guide):
        named |= set(re.findall(r"(\w+)=", call))
    assert {"schedule", "opt_in"} <= named
    unknown = named - set(inspect.signature(check).parameters)
    assert unknown == set(), f"docs/extra-checks.md names no such @check parameter: {unknown}"


def test_the_public_names_are_the_private_ones() -> None:
    from pytest_osfoundry.client import ToolReply
    from pytest_osfoundry.conformance.server._harness import CheckFailure, Conformance

    assert public.check is check and public.ExtraRule is ExtraRule
    assert public.Conformance is Conformance and public.CheckFailure is CheckFailure
    assert public.ToolReply is ToolReply and public.CheckInfo is CheckInfo
    assert set(public.__all__) <= set(dir(public))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = public.nothing


def test_an_extra_check_takes_its_rule_prose() -> None:
    rule = _rule("X-TEAM2", area="team")

    @check("X-TEAM2-answers-fast", "The team's server answers.", rule=rule)
    def fn(osf_conf: object) -> None: ...

    info = check_info(fn)
    assert info is not None
    assert (info.rule, info.level, info.area, info.spec) == (
        "X-TEAM2",
        "documented",
        "team",
        "docs/team.md#x",
    )
    assert fn.pytestmark[0].name == "documented"  # type: ignore[attr-defined]
    assert sort_key(info)[0] > 0 and sort_key(info)[1] == "team"


@pytest.mark.parametrize(
    ("check_id", "rule", "message"),
    [
        ("X-TEAM-thing", None, "needs rule=ExtraRule"),
        ("X-OTHER-thing", "X-TEAM", "its rule is X-OTHER, but rule= is X-TEAM"),
        ("D6-thing", "X-TEAM", "rule= is for X- rules"),
        ("X-team-thing", "X-TEAM", "must be '<RULE>-<slug>'"),
        ("X-TEAM-Thing", "X-TEAM", "must be '<RULE>-<slug>'"),
        ("Q1-thing", None, "must be '<RULE>-<slug>'"),
    ],
)
def test_check_refuses_a_wrong_rule(check_id: str, rule: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check(check_id, "It asserts.", rule=_rule(rule) if rule else None)


@pytest.mark.parametrize(
    ("rule_id", "changes", "message"),
    [
        ("D6", {}, "must be 'X-' and an upper-case name"),
        ("X-acme", {}, "must be 'X-' and an upper-case name"),
        ("X-TEAM", {"title": " "}, "title must be a non-empty text"),
        ("X-TEAM", {"spec": ""}, "spec must be a non-empty text"),
        ("X-TEAM", {"area": ""}, "area must be a non-empty text"),
        ("X-TEAM", {"level": "maybe"}, "level 'maybe' is not"),
    ],
)
def test_extra_rule_refuses_bad_prose(rule_id: str, changes: dict[str, str], message: str) -> None:
    with pytest.raises(ExtraRuleError, match=message):
        _rule(rule_id, **changes)


def test_an_opt_in_must_be_an_option_the_suite_honours() -> None:
    with pytest.raises(ValueError, match="opt_in '--team-slow' is not an option"):
        check("X-TEAM4-slow", "It asserts.", rule=_rule("X-TEAM4"), opt_in="--team-slow")

    @check("X-TEAM4-timed", "It asserts.", rule=_rule("X-TEAM4"), opt_in="--osf-timing")
    def fn(osf_conf: object) -> None: ...

    info = check_info(fn)
    assert info is not None and info.opt_in == "--osf-timing"


def test_one_extra_rule_id_has_one_prose() -> None:
    check("X-TEAM3-one", "It asserts.", rule=_rule("X-TEAM3"))
    check("X-TEAM3-two", "It asserts.", rule=_rule("X-TEAM3"))  # equal prose: the same rule
    with pytest.raises(ExtraRuleError, match="two extra rules are named X-TEAM3"):
        check("X-TEAM3-three", "It asserts.", rule=_rule("X-TEAM3", title="another"))


def test_baselines_and_rule_of_read_extra_ids() -> None:
    assert parse_baseline("X-ACME-rate-limit  # ours\nD6-get-other-agent\n").ids == (
        "X-ACME-rate-limit",
        "D6-get-other-agent",
    )
    with pytest.raises(BaselineError, match="X-acme-rate' is not a check id"):
        parse_baseline("X-acme-rate\n")
    assert rule_of("X-ACME-rate-limit") == "X-ACME"
    assert rule_of("D6-get-other-agent") == "D6"
