"""What talks to a server: transports, the MCP client and the relay client.

* :class:`McpClient` — an agent's MCP connection (Streamable HTTP); clients given
  one :class:`EraCache` share the MCP era they found per origin.
* :class:`RelayClient` — the desktop's side of the relay API; :class:`RelayApiClient`
  is what the fake relay needs of one.
* :class:`Transport` and its implementations: :class:`DirectTransport` (in-process),
  :class:`HttpxTransport` (a socket or a respx mount), :class:`SocketTransport`
  (plain ``http://`` over the standard library's sockets, the conformance suite's),
  :class:`RecordingTransport`
  (keeps every :class:`Exchange`, tokens masked).
  :class:`BoundedClient` is the httpx client with one deadline per exchange.
* The errors, all under :class:`OsfClientError`.
* What the conformance suite shares with the kit (no value it asserts): the
  decoder of answers, :class:`ToolReply` and :func:`decode_answer`; the SSE parser
  :func:`parse_sse`; the masking functions :func:`mask_token` and :func:`mask_url`.

Tokens never appear in any ``repr``, error message or rendered exchange.
"""

from pytest_osfoundry.client._bounded_http import BoundedClient
from pytest_osfoundry.client._errors import (
    HttpStatusError,
    JsonRpcError,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    ToolError,
)
from pytest_osfoundry.client._exchange import Exchange, mask_token, mask_url
from pytest_osfoundry.client._mcp_client import EraCache, McpClient, parse_sse
from pytest_osfoundry.client._relay_client import RelayApiClient, RelayClient
from pytest_osfoundry.client._socket_transport import SocketTransport
from pytest_osfoundry.client._tool_result import ToolReply, decode_answer
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
    "BoundedClient",
    "ConnectionLost",
    "DeadlineExceeded",
    "DirectTransport",
    "EraCache",
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
    "SocketTransport",
    "ToolError",
    "ToolReply",
    "Transport",
    "decode_answer",
    "mask_token",
    "mask_url",
    "parse_sse",
]
