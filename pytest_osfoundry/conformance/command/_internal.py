"""What the conformance package's other rooms use of the running of an outside command.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``CommandError`` -- The command cannot be split or started (the message says why,
  naming the command). For the pytest plugin, the relay suite.
* ``CommandProcess`` -- One run of a command (see the module). For the relay suite.
* ``CommandStarts`` -- One check's starts of its command, in order (see the module). For
  the relay suite.
* ``kill_all`` -- SIGKILL every command's process group still running (interpreter exit,
  Ctrl-C). For the pytest plugin, the relay suite.
* ``split_command`` -- ``CMD`` as argv: ``embedded`` is ``python -m embedded_module``
  under this interpreter (the kit's own program). For the relay suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.command._process import (
        CommandError,
        CommandProcess,
        CommandStarts,
        kill_all,
        split_command,
    )

_LAZY: dict[str, str] = {
    "CommandError": "pytest_osfoundry.conformance.command._process",
    "CommandProcess": "pytest_osfoundry.conformance.command._process",
    "CommandStarts": "pytest_osfoundry.conformance.command._process",
    "kill_all": "pytest_osfoundry.conformance.command._process",
    "split_command": "pytest_osfoundry.conformance.command._process",
}
"""Each shared name and the module that defines it."""

__all__ = ["CommandError", "CommandProcess", "CommandStarts", "kill_all", "split_command"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
