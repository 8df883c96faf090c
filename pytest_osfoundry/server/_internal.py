"""What the kit's other subpackages use of the reference server beyond its public names.

Not for users (they use :mod:`pytest_osfoundry.server`); the one door through which
another subpackage reaches the server's private modules (``tests/test_faces.py``).
Each name, with who needs it:

* :class:`ClockAdmin`, :data:`ADMIN_PREFIX`, :data:`MAX_ADVANCE`, :func:`shown` -- the
  virtual clock's admin path: ``osfoundry-fake serve`` puts it in front and its fault
  schedule speaks its language.
* :func:`normalize_protocols`, :class:`OriginPolicy`, :data:`KEY_SECONDS_MIN` -- what
  ``osfoundry-fake serve``'s options are checked against.
* :class:`DirectToolClient`, :class:`DirectRelayClient` -- an agent's and a desktop's
  calls straight on a server's state: the world's in-process wiring.
* :func:`event_stream` -- an answer as the endpoint's event stream: the agent suite's
  instrumented server sends answers that way when a check leaves the stream open.
"""

from pytest_osfoundry.server._clock_admin import ADMIN_PREFIX, MAX_ADVANCE, ClockAdmin, shown
from pytest_osfoundry.server._eras import normalize_protocols
from pytest_osfoundry.server._mcp import event_stream
from pytest_osfoundry.server._origins import OriginPolicy
from pytest_osfoundry.server._records import KEY_SECONDS_MIN
from pytest_osfoundry.server._state_clients import DirectRelayClient, DirectToolClient

__all__ = [
    "ADMIN_PREFIX",
    "KEY_SECONDS_MIN",
    "MAX_ADVANCE",
    "ClockAdmin",
    "DirectRelayClient",
    "DirectToolClient",
    "OriginPolicy",
    "event_stream",
    "normalize_protocols",
    "shown",
]
