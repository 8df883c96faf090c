"""What the kit's other subpackages use of the relay beyond its public names.

Not for users (they use :mod:`pytest_osfoundry.relay`); the one door through which
another subpackage reaches the relay's private modules (``tests/test_faces.py``).
Like the package, each name is imported when first asked for, from its own module only
(the bound's arithmetic never loads the desktop). Each name, with who needs it:

* :data:`DEFAULT_HISTORY` -- how much a relay keeps: the world and
  ``osfoundry-fake serve`` keep the same.
* :data:`OfflineMode`, :func:`check_offline_mode` -- how a desktop is offline: the world
  and the desktop faults take and check it.
* :func:`session_dict` -- a session as a sync uploads it: the load's preflight sends one.
* :data:`SEED_ENVELOPE` -- the seed's completion envelope: the simulator sizes results by it.
* :func:`add_relay_parser`, :class:`MaskingFilter` -- the ``relay`` sub-command and its
  token-masking log filter: ``osfoundry-fake``'s command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.relay._bounded import SEED_ENVELOPE
    from pytest_osfoundry.relay._cli import MaskingFilter, add_relay_parser
    from pytest_osfoundry.relay._desktop import (
        DEFAULT_HISTORY,
        OfflineMode,
        check_offline_mode,
        session_dict,
    )

__all__ = [
    "DEFAULT_HISTORY",
    "SEED_ENVELOPE",
    "MaskingFilter",
    "OfflineMode",
    "add_relay_parser",
    "check_offline_mode",
    "session_dict",
]

_HOMES: dict[str, str] = {
    "DEFAULT_HISTORY": "pytest_osfoundry.relay._desktop",
    "OfflineMode": "pytest_osfoundry.relay._desktop",
    "check_offline_mode": "pytest_osfoundry.relay._desktop",
    "session_dict": "pytest_osfoundry.relay._desktop",
    "SEED_ENVELOPE": "pytest_osfoundry.relay._bounded",
    "MaskingFilter": "pytest_osfoundry.relay._cli",
    "add_relay_parser": "pytest_osfoundry.relay._cli",
}
"""Each shared name and the module that defines it."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
