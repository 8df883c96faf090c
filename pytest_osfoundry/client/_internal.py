"""What the kit's other subpackages use of the client beyond its public names.

Not for users (they use :mod:`pytest_osfoundry.client`); the one door through which
another subpackage reaches the client's private modules (``tests/test_faces.py``).
Each name, with who needs it:

* :data:`MODERN_PROTOCOL_VERSION`, :data:`PROTOCOL_CHOICES` -- the revisions
  ``protocol=`` accepts: the world, the simulator and their command lines offer the same.
* :func:`request_body`, :data:`ACCEPT` -- the one writer of a JSON-RPC request and the
  Accept value every MCP request sends: the conformance suite's wire and probes send as
  :class:`~pytest_osfoundry.client.McpClient` does.
* :func:`id_of_request` -- the load's statistics name each exchange by its request id.
* :func:`split_target` -- the load's transport reports the path a server sees.
* :func:`json_call` -- the relay driver's client makes the kit's one JSON-over-HTTP call.
"""

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
