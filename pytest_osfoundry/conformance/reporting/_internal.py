"""What the conformance package's other rooms use of the end of a run and its reports
(each name imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.reporting._baseline import (
        Baseline,
        BaselineError,
        read_baseline,
    )
    from pytest_osfoundry.conformance.reporting._outcome import (
        REFUSED,
        EndWatcher,
        Unrun,
        exit_reason,
        planned_checks,
        stop_reason,
        unrun_reports,
    )
    from pytest_osfoundry.conformance.reporting._output_paths import (
        check_output_paths,
        writable_path_problem,
    )
    from pytest_osfoundry.conformance.reporting._results import (
        STRICT_PREFIX,
        Results,
        Summary,
        report_document,
        terminal_lines,
    )
    from pytest_osfoundry.conformance.reporting._writers import write_junit, write_reports

_LAZY: dict[str, str] = {
    "Baseline": "pytest_osfoundry.conformance.reporting._baseline",
    "BaselineError": "pytest_osfoundry.conformance.reporting._baseline",
    "EndWatcher": "pytest_osfoundry.conformance.reporting._outcome",
    "REFUSED": "pytest_osfoundry.conformance.reporting._outcome",
    "Results": "pytest_osfoundry.conformance.reporting._results",
    "STRICT_PREFIX": "pytest_osfoundry.conformance.reporting._results",
    "Summary": "pytest_osfoundry.conformance.reporting._results",
    "Unrun": "pytest_osfoundry.conformance.reporting._outcome",
    "check_output_paths": "pytest_osfoundry.conformance.reporting._output_paths",
    "exit_reason": "pytest_osfoundry.conformance.reporting._outcome",
    "planned_checks": "pytest_osfoundry.conformance.reporting._outcome",
    "read_baseline": "pytest_osfoundry.conformance.reporting._baseline",
    "report_document": "pytest_osfoundry.conformance.reporting._results",
    "stop_reason": "pytest_osfoundry.conformance.reporting._outcome",
    "terminal_lines": "pytest_osfoundry.conformance.reporting._results",
    "unrun_reports": "pytest_osfoundry.conformance.reporting._outcome",
    "writable_path_problem": "pytest_osfoundry.conformance.reporting._output_paths",
    "write_junit": "pytest_osfoundry.conformance.reporting._writers",
    "write_reports": "pytest_osfoundry.conformance.reporting._writers",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "REFUSED",
    "STRICT_PREFIX",
    "Baseline",
    "BaselineError",
    "EndWatcher",
    "Results",
    "Summary",
    "Unrun",
    "check_output_paths",
    "exit_reason",
    "planned_checks",
    "read_baseline",
    "report_document",
    "stop_reason",
    "terminal_lines",
    "unrun_reports",
    "writable_path_problem",
    "write_junit",
    "write_reports",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
