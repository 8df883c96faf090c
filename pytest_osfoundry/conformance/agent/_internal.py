"""What the conformance package's other rooms use of the agent suite.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``AGENT_CONF`` -- The agent check's context, on its item (set by its fixture or the
  concurrent runner). For the pytest plugin.
* ``agent_evidence`` -- The report's ``agent`` entry for ``conf`` (see the module),
  masked. For the pytest plugin.
* ``agent_lines`` -- The evidence as text for pytest's failure report: a line per call,
  then each start's exit code, report and output tail. For the pytest plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.agent._evidence import AGENT_CONF, agent_evidence, agent_lines

_LAZY: dict[str, str] = {
    "AGENT_CONF": "pytest_osfoundry.conformance.agent._evidence",
    "agent_evidence": "pytest_osfoundry.conformance.agent._evidence",
    "agent_lines": "pytest_osfoundry.conformance.agent._evidence",
}
"""Each shared name and the module that defines it."""

__all__ = ["AGENT_CONF", "agent_evidence", "agent_lines"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
