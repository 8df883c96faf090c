"""What talks to a server: transports, the MCP client and the relay client.

* :class:`McpClient` — an agent's MCP connection (Streamable HTTP).
* :class:`RelayClient` — the desktop's side of the relay API; :class:`RelayApiClient`
  is what the fake relay needs of one.
* :class:`Transport` and its implementations: :class:`DirectTransport` (in-process),
  :class:`HttpxTransport` (a socket or a respx mount), :class:`RecordingTransport`
  (keeps every :class:`Exchange`, tokens masked).
* The errors, all under :class:`OsfClientError`.

Tokens never appear in any ``repr``, error message or rendered exchange. Helpers
such as the masking functions and the SSE parser live in the private modules
(``_exchange``, ``_mcp_client``, ``_transport``) for the kit's own use.
"""

from pytest_osfoundry.client._errors import (
    HttpStatusError,
    JsonRpcError,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    ToolError,
)
from pytest_osfoundry.client._exchange import Exchange
from pytest_osfoundry.client._mcp_client import McpClient
from pytest_osfoundry.client._relay_client import RelayApiClient, RelayClient
from pytest_osfoundry.client._transport import (
    ConnectionLost,
    DeadlineExceeded,
    DirectTransport,
    HttpxTransport,
    RecordingTransport,
    ResponseTooLarge,
    Transport,
)

__all__ = [
    "ConnectionLost",
    "DeadlineExceeded",
    "DirectTransport",
    "Exchange",
    "HttpStatusError",
    "HttpxTransport",
    "JsonRpcError",
    "McpClient",
    "OsfClientError",
    "ProtocolViolation",
    "RecordingTransport",
    "RelayApiClient",
    "RelayClient",
    "ReplyLost",
    "ResponseTooLarge",
    "ToolError",
    "Transport",
]
