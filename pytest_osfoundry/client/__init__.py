"""What talks to a server: transports, the MCP client and the relay client.

* :class:`McpClient` — an agent's MCP connection (Streamable HTTP); clients given
  one :class:`EraCache` share the MCP era they found per origin.
* :class:`RelayClient` — the desktop's side of the relay API; :class:`RelayApiClient`
  is what the fake relay needs of one.
* :class:`Transport` and its implementations: :class:`HttpTransport` (HTTP/1.1 over
  the network, ``http://`` and ``https://``: every exchange bounded in time and size,
  the one the kit and the conformance suite send through), :class:`DirectTransport`
  (a handler called in-process) and :class:`RecordingTransport` (keeps every
  :class:`Exchange`, tokens masked).
* The errors, all under :class:`OsfClientError`.
* Reading replies, the one way the kit and the conformance suite read them:
  :func:`read_answer` finds the JSON-RPC message answering a request in a JSON body
  or an event stream (:class:`Answer`); the event-stream decoder under it,
  :class:`EventStreamDecoder` (fed bytes as they arrive) and :func:`decode_events`
  (a whole body), yielding :class:`Event` records as the SSE format says.
* What the conformance suite shares with the kit (no value it asserts): the
  decoder of answers, :class:`ToolReply` and :func:`decode_answer`; the masking
  functions :func:`mask_token`, :func:`mask_cut_end` and :func:`mask_url`.

Tokens never appear in any ``repr``, error message or rendered exchange.
"""

from pytest_osfoundry._masking import mask_cut_end, mask_token, mask_url
from pytest_osfoundry._sse import Event, EventStreamDecoder, decode_events
from pytest_osfoundry.client._errors import (
    ConnectionLost,
    DeadlineExceeded,
    HttpStatusError,
    JsonRpcError,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    ResponseTooLarge,
    ToolError,
)
from pytest_osfoundry.client._exchange import Exchange
from pytest_osfoundry.client._http_transport import HttpTransport
from pytest_osfoundry.client._jsonrpc import Answer, read_answer
from pytest_osfoundry.client._mcp_client import EraCache, McpClient
from pytest_osfoundry.client._relay_client import RelayApiClient, RelayClient
from pytest_osfoundry.client._tool_result import ToolReply, decode_answer
from pytest_osfoundry.client._transport import DirectTransport, RecordingTransport, Transport

__all__ = [
    "Answer",
    "ConnectionLost",
    "DeadlineExceeded",
    "DirectTransport",
    "EraCache",
    "Event",
    "EventStreamDecoder",
    "Exchange",
    "HttpStatusError",
    "HttpTransport",
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
    "ToolReply",
    "Transport",
    "decode_answer",
    "decode_events",
    "mask_cut_end",
    "mask_token",
    "mask_url",
    "read_answer",
]
