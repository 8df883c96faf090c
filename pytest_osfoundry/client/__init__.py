"""What talks to a server: transports, the MCP client and the relay client.

* :mod:`~pytest_osfoundry.client._transport` -- :class:`Transport` and its three
  implementations (in-process, httpx, recording).
* :mod:`~pytest_osfoundry.client._mcp_client` -- :class:`McpClient` (Streamable HTTP).
* :mod:`~pytest_osfoundry.client._relay_client` -- :class:`RelayClient` (desktop relay API).
* :mod:`~pytest_osfoundry.client._exchange` -- :class:`Exchange` records and masking.
* :mod:`~pytest_osfoundry.client._errors` -- the exceptions, under :class:`OsfClientError`.

Tokens never appear in any ``repr``, error message or rendered exchange.
"""

from pytest_osfoundry.client._errors import (
    HttpStatusError,
    JsonRpcError,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    ToolError,
)
from pytest_osfoundry.client._exchange import (
    MASK,
    Exchange,
    mask_headers,
    mask_token,
    mask_url,
    secrets_in,
)
from pytest_osfoundry.client._mcp_client import (
    CLIENT_NAME,
    SUPPORTED_PROTOCOL_VERSIONS,
    McpClient,
    parse_sse,
)
from pytest_osfoundry.client._relay_client import RELAY_PREFIX, RelayClient
from pytest_osfoundry.client._transport import (
    DeadlineExceeded,
    DirectTransport,
    HttpxTransport,
    RecordingTransport,
    ResponseTooLarge,
    Transport,
    split_target,
)

__all__ = [
    "CLIENT_NAME",
    "MASK",
    "RELAY_PREFIX",
    "SUPPORTED_PROTOCOL_VERSIONS",
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
    "RelayClient",
    "ReplyLost",
    "ResponseTooLarge",
    "ToolError",
    "Transport",
    "mask_headers",
    "mask_token",
    "mask_url",
    "parse_sse",
    "secrets_in",
    "split_target",
]
