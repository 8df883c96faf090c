"""The pytest11 plugin stays thin: the suite's hooks only when the run is about the suite."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import pytest_osfoundry.conformance
from pytest_osfoundry.conformance.suite._options import OPTIONS
from pytest_osfoundry.plugin import SUITE_PLUGIN

pytest_plugins = ["pytester"]

# A user's test that reports whether the suite's hooks are registered in its run.
_PROBE = f"""
def test_probe(pytestconfig):
    suite = pytestconfig.pluginmanager.get_plugin({SUITE_PLUGIN!r})
    print("SUITE-REGISTERED" if suite is not None else "SUITE-ABSENT")
    makereport = pytestconfig.pluginmanager.hook.pytest_runtest_makereport
    modules = {{getattr(impl.plugin, "__name__", "") for impl in makereport.get_hookimpls()}}
    print("SUITE-MAKEREPORT" if any("conformance" in m for m in modules) else "NO-MAKEREPORT")
    names = sorted(n for n, _ in pytestconfig.pluginmanager.list_name_plugin() if "osfoundry" in n)
    print("PLUGINS", " ".join(names))
"""


@pytest.fixture(autouse=True)
def _no_osf_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("OSF_")]:
        monkeypatch.delenv(name)


def _probe(pytester: pytest.Pytester, *args: str) -> str:
    pytester.makepyfile(test_probe=_PROBE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-s", "test_probe.py", *args)
    result.assert_outcomes(passed=1)
    return result.stdout.str()


def test_without_a_target_the_suite_is_not_registered(pytester: pytest.Pytester) -> None:
    out = _probe(pytester)
    assert "SUITE-ABSENT" in out and "NO-MAKEREPORT" in out


def test_a_blank_environment_target_is_a_usage_error_not_a_silent_no_target(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSF_TARGET", "  ")
    pytester.makepyfile(test_probe=_PROBE)
    result = pytester.runpytest("-p", "no:cacheprovider", "test_probe.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*OSF_TARGET is set but empty*"])


def test_a_target_on_the_command_line_registers_the_suite(pytester: pytest.Pytester) -> None:
    """The suite's plugin and each of its hook modules, registered as plugins of their own."""
    from pytest_osfoundry.conformance.plugin._setup import HOOK_MODULES

    out = _probe(pytester, "--osf-target=embedded")
    assert "SUITE-REGISTERED" in out and "SUITE-MAKEREPORT" in out
    registered = next(line for line in out.splitlines() if line.startswith("PLUGINS")).split()
    assert {SUITE_PLUGIN, *HOOK_MODULES} <= set(registered)


def _suite_modules() -> list[str]:
    """Every module of the suite's machinery (``pytest_osfoundry.conformance``, relay too)."""
    package = pytest_osfoundry.conformance
    found = pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    return [package.__name__, *(m.name for m in found if ".rulebook" not in m.name)]


def test_no_module_of_the_suite_re_exports_another_modules_hooks_or_fixtures() -> None:
    """pytest finds each hook and fixture on the module that defines it, registered as a
    plugin of its own (``_plugin.HOOK_MODULES``): a hook or fixture a module holds is
    its own, never one imported from another module to be found there."""
    from pytest_osfoundry.conformance.plugin._setup import HOOK_MODULES

    borrowed = []
    defining = set()
    for name in _suite_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            hook = attr.startswith("pytest_") and callable(value)
            fixture = type(value).__name__ == "FixtureFunctionDefinition"
            if not (hook or fixture):
                continue
            where = getattr(value, "__module__", None)
            if where != name:
                borrowed.append(f"{name}.{attr} (from {where})")
            else:
                defining.add(name)
    assert borrowed == []
    # every module defining hooks or fixtures is registered as a plugin (_extra holds
    # the kit's hook specification, added by plugin.py's pytest_addhooks)
    plugins = {
        "pytest_osfoundry.conformance.plugin._setup",
        "pytest_osfoundry.conformance.plugin._relay",
        "pytest_osfoundry.conformance.plugin._agent",
        *HOOK_MODULES.values(),
    }
    assert defining - {"pytest_osfoundry.conformance.suite._extra"} == plugins


def test_a_target_in_the_environment_registers_the_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSF_TARGET", "embedded")
    assert "SUITE-REGISTERED" in _probe(pytester)


def test_help_lists_every_option_in_the_osfoundry_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    assert result.ret == pytest.ExitCode.OK
    lines = result.stdout.lines
    start = next(i for i, ln in enumerate(lines) if ln.startswith("osfoundry:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and lines[i][0] != " "), None)
    group = "\n".join(lines[start:end])
    for spec in OPTIONS:
        assert f"  {spec.flag}" in group, spec.flag
    outside = "\n".join(lines[:start] + (lines[end:] if end is not None else []))
    assert "--osf-" not in outside


def test_loading_the_plugin_imports_no_component() -> None:
    """What every pytest run of a project with the kit installed pays: pytest and two modules."""
    heavy = (
        "respx",
        "faker",
        "httpx",
        "http.server",
        "freezegun",
        "orjson",
        "jsonschema",
        "httpx2",
        "pytest_osfoundry.aio",
        "pytest_osfoundry._aio_tests",
        "pytest_osfoundry.world",
        "pytest_osfoundry.server",
        "pytest_osfoundry.conformance.plugin._setup",
        "pytest_osfoundry.conformance.server._harness",
    )
    code = textwrap.dedent(
        f"""
        import sys
        import pytest_osfoundry.plugin
        print(sorted(m for m in {heavy!r} if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout


_RELAY_PROBE = """
import sys

def pytest_sessionfinish(session):
    registered = session.config.pluginmanager.has_plugin("osfoundry-relay-conformance")
    imported = "pytest_osfoundry.conformance.relay._harness" in sys.modules
    print(f"relay-registered={registered} relay-imported={imported}")
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # The main job: the server checks alone, the relay suite not even imported.
        (("--osf-target=embedded",), "relay-registered=False relay-imported=False"),
        # Paths given may name relay checks: their hooks and fixtures are there.
        (("--osf-target=embedded", "test_x.py"), "relay-registered=True relay-imported=True"),
        (("--osf-relay-command=embedded",), "relay-registered=True relay-imported=True"),
    ],
)
def test_the_relay_suite_is_loaded_only_when_relay_checks_may_run(
    pytester: pytest.Pytester, args: tuple[str, ...], expected: str
) -> None:
    pytester.makeconftest(_RELAY_PROBE)
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "--co", *args)
    assert expected in result.stdout.str()


def test_a_relay_process_does_not_import_faker() -> None:
    """The kit's relay (and every relay process the tests start) imports the engine for
    its Graphs and never makes a session list: Faker (~70 ms to import) stays out."""
    code = "import sys, pytest_osfoundry.relay.driven; print('faker' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
