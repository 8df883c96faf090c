"""What the kit's other subpackages use of the doors beyond their public names.

Not for users (they use :mod:`pytest_osfoundry.doors`); the one door through which
another subpackage reaches the doors' private modules (``tests/test_faces.py``).
Each name, with who needs it:

* :data:`MAX_LATENCY` -- the longest delay :class:`~pytest_osfoundry.doors.Delayed`
  accepts: ``osfoundry-fake serve`` refuses a longer one up front.
* :func:`mount` -- the respx door's older spelling, still importable from
  :mod:`pytest_osfoundry.server`.
* ``Httpx2Mount``, ``RequestsMount`` -- the older names of two doors, named (for type
  checkers only) by :mod:`pytest_osfoundry.server`, which imports them on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry.doors._delayed import MAX_LATENCY
from pytest_osfoundry.doors._respx import mount

if TYPE_CHECKING:
    from pytest_osfoundry.doors._httpx2 import Httpx2Mount
    from pytest_osfoundry.doors._requests import RequestsMount

__all__ = ["MAX_LATENCY", "Httpx2Mount", "RequestsMount", "mount"]
