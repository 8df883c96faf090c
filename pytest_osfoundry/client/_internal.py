"""What the kit's other subpackages use of the client beyond its public names: the
protocol choices, the one JSON-RPC request writer and Accept value, the JSON call."""

from pytest_osfoundry.client._jsonrpc import ACCEPT, id_of_request, request_body
from pytest_osfoundry.client._mcp_client import MODERN_PROTOCOL_VERSION, PROTOCOL_CHOICES
from pytest_osfoundry.client._transport import json_call, split_target

__all__ = [
    "ACCEPT",
    "MODERN_PROTOCOL_VERSION",
    "PROTOCOL_CHOICES",
    "id_of_request",
    "json_call",
    "request_body",
    "split_target",
]
