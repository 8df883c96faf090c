"""The layout installs everywhere: no links, one top-level name, a complete sdist.

The wheel and the sdist are built offline (``python -m build --no-isolation``) from a
clone made with ``core.symlinks=false`` (Git for Windows' default, where a link
becomes a text file), with the working tree's uncommitted files laid over it, so what
is tested is what a developer is about to commit. The built wheel, unpacked on
``PYTHONPATH`` in an empty folder, runs the conformance suite against ``embedded``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RULEBOOK = "pytest_osfoundry/conformance/rulebook"
#: The layout is checked in a git checkout (it reads what git tracks); an unpacked
#: sdist, which carries these tests too, has no repository to read.
pytestmark = pytest.mark.skipif(
    not (ROOT / ".git").exists(), reason="not a git checkout (an unpacked sdist, say)"
)
#: Tracked files an sdist need not carry.
NOT_IN_SDIST = {".gitignore"}


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def _tracked() -> list[str]:
    return [p for p in _git("ls-files", "-co", "--exclude-standard", "-z").split("\0") if p]


def test_no_symbolic_link_is_tracked_or_lies_in_the_tree() -> None:
    links = [line for line in _git("ls-files", "-s").splitlines() if line.startswith("120000")]
    assert links == [], "symbolic links are tracked (a Windows-style clone breaks them)"
    on_disk = [p for p in _tracked() if (ROOT / p).is_symlink()]
    assert on_disk == [], "symbolic links in the working tree"


def _package_dirs() -> set[str]:
    """Every folder of the installed tree that holds a tracked file: Python imports a
    folder without ``__init__.py`` too (a namespace package, as setuptools counts it)."""
    names = set()
    for rel in _tracked():
        parts = Path(rel).parent.parts
        if parts[:1] == ("pytest_osfoundry",):
            names.add(".".join(parts))
        elif parts[:1] == ("conformance",):
            names.add(".".join(("pytest_osfoundry", "conformance", "rulebook", *parts[1:])))
    return names


def test_the_packages_pyproject_lists_are_the_packages_of_the_tree() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_dirs()
    assert setuptools["package-dir"] == {"pytest_osfoundry.conformance.rulebook": "conformance"}


@dataclass(frozen=True)
class Built:
    """A wheel and an sdist built from a ``core.symlinks=false`` clone."""

    wheel: Path
    sdist: Path
    work: Path
    log: str
    """What the build printed (stdout, then stderr)."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    work = tmp_path_factory.mktemp("layout")
    clone = work / "clone"
    subprocess.run(
        [
            "git",
            "-c",
            "core.symlinks=false",
            "clone",
            "--quiet",
            "--no-hardlinks",
            str(ROOT),
            str(clone),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(["git", "config", "core.symlinks", "false"], cwd=clone, check=True)
    _overlay_working_tree(clone)
    out = work / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(clone)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    yield Built(wheel, sdist, work, result.stdout + result.stderr)


def test_the_build_warns_of_no_folder_left_out_of_the_packages(built: Built) -> None:
    """setuptools warns when a folder it would ship is not in ``packages`` (a folder of
    data, without ``__init__.py``, is a package to Python): the list misses none."""
    absent = re.findall(r"Package '[^']+' is absent from the `packages` configuration", built.log)
    assert absent == []


def _overlay_working_tree(clone: Path) -> None:
    """Lay the working tree's files over the clone; a link is written as Git for Windows
    writes it with ``core.symlinks=false``: a text file holding the link's target."""
    tracked = set(_tracked())
    for rel in _git("ls-files", "-z", cwd=clone).split("\0"):
        if rel and rel not in tracked:
            (clone / rel).unlink(missing_ok=True)
    for rel in tracked:
        source, dest = ROOT / rel, clone / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            dest.unlink(missing_ok=True)
            dest.write_text(os.readlink(source), encoding="utf-8")
        elif source.is_file():
            shutil.copy2(source, dest)


def _expected_wheel_files() -> set[str]:
    files = {p for p in _tracked() if p.startswith("pytest_osfoundry/") and p.endswith(".py")}
    files |= {
        f"{RULEBOOK}/{p.removeprefix('conformance/')}"
        for p in _tracked()
        if p.startswith("conformance/") and p.endswith(".py")
    }
    files |= {p for p in _tracked() if p.startswith("pytest_osfoundry/schemas/")}  # MCP's
    return files | {"pytest_osfoundry/py.typed", f"{RULEBOOK}/rules.toml", f"{RULEBOOK}/spec.md"}


def test_the_wheel_holds_one_top_level_name_and_the_whole_suite(built: Built) -> None:
    names = zipfile.ZipFile(built.wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    [dist_info] = [t for t in tops if t.endswith(".dist-info")]
    assert tops == {"pytest_osfoundry", dist_info}
    assert set(names) - {n for n in names if n.startswith(dist_info)} == _expected_wheel_files()
    assert f"{dist_info}/licenses/LICENSE" in names
    entry_points = zipfile.ZipFile(built.wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "osfoundry = pytest_osfoundry.plugin" in entry_points


def test_the_wheel_runs_the_suite_from_an_empty_folder(built: Built) -> None:
    site = built.work / "site"
    zipfile.ZipFile(built.wheel).extractall(site)
    empty = built.work / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    env |= {"PYTHONPATH": str(site), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pytest_osfoundry.conformance.suite._layout as l; print(l.checks_dir())",
        ],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where) == site / RULEBOOK / "checks"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "pytest_osfoundry.plugin",
            "--osf-target=embedded",
            "-q",
            "-p",
            "no:cacheprovider",
            "--osf-report=r.json",
        ],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    counts = re.search(r"^(\d+) passed, 0 failed", run.stdout, flags=re.M)
    assert counts is not None and int(counts[1]) >= 100, run.stdout[-2000:]
    # The report's spec field names the rule book file this install holds.
    specs = {
        c["spec"].partition("#")[0] for c in json.loads((empty / "r.json").read_text())["checks"]
    }
    assert specs == {str(site / RULEBOOK / "spec.md")}, specs


def test_the_wheels_help_names_nothing_the_wheel_lacks(built: Built) -> None:
    """``pytest --help`` of an installed wheel names no file (the wheel holds no docs/),
    and every module it names imports from the wheel."""
    from tests.test_docs_installed import help_problems

    site = built.work / "site-help"
    zipfile.ZipFile(built.wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    env |= {"PYTHONPATH": str(site), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    shown = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pytest_osfoundry.plugin", "--help"],
        cwd=built.work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ours = " ".join(shown.partition("osfoundry:")[2].partition("\n\n")[0].split())
    paths, modules = help_problems(ours)
    assert "--osf-relay-command" in ours and paths == [], paths
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.util as u, sys; print(all(u.find_spec(m) for m in sys.argv[1:]))",
            *modules,
        ],
        cwd=built.work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert modules and found == "True", modules


def test_the_sdist_carries_every_tracked_file_and_builds_the_same_wheel(built: Built) -> None:
    with tarfile.open(built.sdist) as tar:
        members = tar.getnames()
        top = members[0].split("/", 1)[0]
        inside = {m.removeprefix(top + "/") for m in members}
        tar.extractall(built.work / "sdist")  # our own sdist
    missing = {p for p in _tracked() if p not in inside} - NOT_IN_SDIST
    assert missing == set(), "add these to MANIFEST.in"
    out = built.work / "from-sdist"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--wheel",
            "--outdir",
            str(out),
            str(built.work / "sdist" / top),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [again] = out.glob("*.whl")
    assert sorted(zipfile.ZipFile(again).namelist()) == sorted(
        zipfile.ZipFile(built.wheel).namelist()
    )
