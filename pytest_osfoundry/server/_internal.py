"""What the kit's other subpackages use of the reference server beyond its public names:
the clock's admin door, the serve options' checks, the direct clients, the
endpoint's event-stream encoding (the agent suite's open-stream fault), and the strict
request-body parse (the agent suite records a request as the server read it)."""

from pytest_osfoundry.server._clock_admin import ADMIN_PREFIX, MAX_ADVANCE, ClockAdmin, shown
from pytest_osfoundry.server._eras import normalize_protocols
from pytest_osfoundry.server._mcp import event_stream
from pytest_osfoundry.server._origins import OriginPolicy
from pytest_osfoundry.server._records import KEY_SECONDS_MIN
from pytest_osfoundry.server._request_body import BadJson, parse_body
from pytest_osfoundry.server._state_clients import DirectRelayClient, DirectToolClient

__all__ = [
    "ADMIN_PREFIX",
    "KEY_SECONDS_MIN",
    "MAX_ADVANCE",
    "BadJson",
    "ClockAdmin",
    "DirectRelayClient",
    "DirectToolClient",
    "OriginPolicy",
    "event_stream",
    "normalize_protocols",
    "parse_body",
    "shown",
]
