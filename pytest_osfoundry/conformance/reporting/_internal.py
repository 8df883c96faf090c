"""What the conformance package's other rooms use of the end of a run and its reports.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``Baseline`` -- The ids listed in a baseline file, in file order, and where it came
  from. For the pytest plugin.
* ``BaselineError`` -- The baseline file cannot be read; the message names the file and
  line. For the pytest plugin.
* ``check_output_paths`` -- Fail before the run if a report or baseline file cannot be
  written. For the pytest plugin.
* ``EndWatcher`` -- Notes what pytest says about the end of the run and the checks it
  collected. For the pytest plugin.
* ``exit_reason`` -- Why a run that exits ``exitstatus`` is not green although no check
  says so. For the pytest plugin.
* ``planned_checks`` -- The rule book's checks a run with ``settings`` would collect.
  For the pytest plugin.
* ``read_baseline`` -- Read a baseline file. For the pytest plugin.
* ``REFUSED`` -- How the reason of a run refused for its options (a usage error) starts.
  For the agent suite, the pytest plugin.
* ``report_document`` -- The JSON report: ``suite_version``, ``spec``, ``target``,
  ``summary``, ``checks``. For the pytest plugin.
* ``Results`` -- One ``CheckResult`` per check, fed with test reports as they
  arrive. For the pytest plugin.
* ``stop_reason`` -- Why the run stopped before every collected check ran (``None``: it
  did not). For the pytest plugin.
* ``STRICT_PREFIX`` -- How ``--osf-strict`` words a check that could not run, before its
  reason. For the pytest plugin.
* ``Summary`` -- The counts of one run and the baseline entries that need attention. For
  the pytest plugin.
* ``terminal_lines`` -- The terminal summary as ``(text, markup)`` lines (markup for
  TerminalWriter). For the pytest plugin.
* ``Unrun`` -- A collected check that never reported: its node id, location and
  metadata. For the pytest plugin.
* ``unrun_reports`` -- A skipped set-up report and a passed teardown report per unrun
  check. For the pytest plugin.
* ``writable_path_problem`` -- Why a file cannot be written at ``path`` (``None``: it
  can, as far as we can tell). For the pytest plugin.
* ``write_junit`` -- A JUnit XML file with one errored test case per check (none of them
  ran). For the pytest plugin.
* ``write_reports`` -- Write the files the options ask for; one ``"what: path"`` line
  per file written. For the pytest plugin.
"""

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
