"""``osfoundry-sim``'s mistakes are found before the simulation runs, in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.sim._cli import FIT_SECONDS, main


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("out.txt", "cannot tell the image format from '.txt'"),
        ("out", "cannot tell the image format from 'no suffix'"),
        ("missing/out.png", "does not exist"),
    ],
)
def test_a_bad_plot_path_fails_before_the_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    assert main(["--plot", name]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing ran
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert time.perf_counter() - started < 5


def test_a_plot_path_naming_a_folder_fails_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "plots.png"
    folder.mkdir()
    assert main(["polling", "--plot", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is a folder" in err


def test_fit_sigma_refuses_experiments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--fit-sigma", "pickup"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--fit-sigma" in err and "'pickup'" in err


def test_fit_sigma_warns_of_its_duration(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_osfoundry.sim._fit as fit

    def quick(params: Any, jobs: int = 1) -> tuple[float, list[Any]]:
        return 0.81, []

    monkeypatch.setattr(fit, "fit_sigma", quick)
    assert main(["--fit-sigma", "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"about {FIT_SECONDS} s" in err and "--runs" in err
    assert json.loads(out)["best_sigma"] == 0.81
    assert main(["--fit-sigma", "--json", "--runs", "30"]) == 0
    assert "about" not in capsys.readouterr().err  # asked for a quick fit: no warning


def test_a_strategy_from_a_package_in_the_current_folder(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("osfoundry-sim")
    if not script.exists():
        pytest.skip("the console script is not installed next to this Python")
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "polling.py").write_text(
        "def adaptive(attempt, elapsed):\n    return 20.0 if attempt == 0 else 7.0\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(script), "polling", "--runs", "20", "--strategy", "mypkg.polling:adaptive", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["experiments"]["polling"]
    assert [r["strategy"] for r in rows] == ["mypkg.polling:adaptive"]


def test_the_footer_compares_only_a_whole_run_with_the_seeds_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["access"]) == 0
    footer = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert footer.startswith("1 experiment(s)") and "the seed" not in footer


def test_no_percentage_against_a_zero() -> None:
    from pytest_osfoundry.sim._report import compare

    assert compare(0.0, 3.0, " s") == "0.0 s / 3.0 s (-3.0 s)"
    assert compare(3.0, 0.0, " s") == "3.0 s / 0.0 s (+3.0 s)"
    assert compare(10.0, 9.8, " s") == "10.0 s / 9.8 s (+2.0%)"
