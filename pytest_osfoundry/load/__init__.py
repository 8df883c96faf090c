"""``osfoundry-load``: thousands of the kit's agents and desktops against any server.

Behind the ``[load]`` extra (Locust and its gevent). Importing this package imports
neither: only ``load/locustfile.py`` and the modules it runs
(``_users``, ``_coordination``) import Locust, and only ``osfoundry-load`` (or Locust
given that file) loads them, in a process of its own. The pytest plugin never imports
this package. docs/load.md is the guide.

The parts without Locust, usable anywhere:

* :class:`Target`, :func:`read_target`, :func:`write_target` — the accounts file;
* :class:`Accounting`, :func:`account` — the end-of-run accounting;
* :class:`Ledger` — what a load process saw;
* :class:`StatsTransport` — a transport that reports each exchange to Locust's
  statistics (any ``fire`` callable).

They are imported when first used (``osfoundry-load`` must import Locust, which
patches the process for gevent, before the kit's clients and clocks).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_osfoundry.load._accounting import Accounting, account
    from pytest_osfoundry.load._accounts import (
        Account,
        AccountsError,
        Target,
        read_target,
        write_target,
    )
    from pytest_osfoundry.load._ledger import Ledger
    from pytest_osfoundry.load._transport import StatsTransport

__all__ = [
    "Account",
    "Accounting",
    "AccountsError",
    "Ledger",
    "StatsTransport",
    "Target",
    "account",
    "read_target",
    "write_target",
]

_HOMES = {
    "Account": "_accounts",
    "AccountsError": "_accounts",
    "Target": "_accounts",
    "read_target": "_accounts",
    "write_target": "_accounts",
    "Accounting": "_accounting",
    "account": "_accounting",
    "Ledger": "_ledger",
    "StatsTransport": "_transport",
}


def __getattr__(name: str) -> Any:
    """The public names, imported when first used: ``osfoundry-load`` must import Locust
    (which patches the process for gevent) before the kit's clients and clocks."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
