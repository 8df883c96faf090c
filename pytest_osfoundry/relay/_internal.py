"""What the kit's other subpackages use of the relay beyond its public names, each
imported on first use: its history, offline modes, session shape, seed, command line."""

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
