"""What the kit's other subpackages use of the doors beyond their public names: the
longest delay, and the older door names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry.doors._delayed import MAX_LATENCY
from pytest_osfoundry.doors._respx import mount

if TYPE_CHECKING:
    from pytest_osfoundry.doors._httpx2 import Httpx2Mount
    from pytest_osfoundry.doors._requests import RequestsMount

__all__ = ["MAX_LATENCY", "Httpx2Mount", "RequestsMount", "mount"]
