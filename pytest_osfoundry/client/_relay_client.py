"""A client for the desktop relay API (SPEC D10, R9-R13), used by the fake relay.

Every call is one JSON exchange (:func:`~pytest_osfoundry.client._transport.json_call`)
under ``{base_url}/external-assistants/graph-relays`` with ``Authorization: Bearer
<desktop token>``. A non-2xx reply raises
:class:`~pytest_osfoundry.client._errors.HttpStatusError` (404 unknown command, 409
conflicting completion, 413 too large, ...); a body that is not the JSON object the
API promises raises :class:`ProtocolViolation`; a lost reply raises ``ReplyLost`` from
the transport.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pytest_osfoundry._checks import check_implements
from pytest_osfoundry._masking import mask_url
from pytest_osfoundry._vocabulary import RELAY_PREFIX, RELAY_SYNC, relay_command_path
from pytest_osfoundry.client._errors import ProtocolViolation
from pytest_osfoundry.client._transport import FixedHeaders, Transport, json_call

__all__ = ["RELAY_PREFIX", "RelayApiClient", "RelayClient"]


class RelayApiClient(Protocol):
    """What the fake desktop relay needs of the relay API (:class:`RelayClient` has it)."""

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Upload the shared sessions; return the queued commands (D10)."""
        ...

    def start(self, command_id: str, execution_id: str) -> str:
        """Mark a command started; return the status the server answers (R9)."""
        ...

    def control(self, command_id: str) -> dict[str, Any]:
        """Read ``{"status", "cancel_requested"}`` (R10)."""
        ...

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Post the bounded completion (R11)."""
        ...


class RelayClient:
    """The desktop's side of the relay API, bound to one base URL and one token.

    ``base_url`` may end with or without ``/``. ``token`` is the desktop's bearer
    token (``None`` sends no ``Authorization`` header, for checks that the API
    refuses that); it never appears in ``repr`` or error messages. Command ids are
    percent-quoted into the path, so no id can escape its path segment.
    """

    def __init__(self, transport: Transport, base_url: str, token: str | None) -> None:
        check_implements(transport, "transport", Transport)
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a str, got {base_url!r}")
        self.transport = transport
        self.base_url = base_url.rstrip("/")
        self._token = token
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        self._get_headers = FixedHeaders(headers)
        self._post_headers = FixedHeaders({**headers, "Content-Type": "application/json"})

    def _command_url(self, command_id: str, action: str) -> str:
        return self.base_url + relay_command_path(command_id, action)

    def _call(self, method: str, url: str, payload: Mapping[str, Any] | None) -> dict[str, Any]:
        headers = self._get_headers if payload is None else self._post_headers
        data = json_call(self.transport, method, url, headers, payload, (self._token,))
        if not isinstance(data, dict):
            where = mask_url(url, (self._token,))
            raise ProtocolViolation(
                f"{method} {where} answered a JSON {type(data).__name__}, not an object"
            )
        return data

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``POST .../sync``: upload the shared sessions; return the queued commands (D10)."""
        url = self.base_url + RELAY_SYNC
        data = self._call("POST", url, {"project_id": project_id, "sessions": sessions})
        commands = data.get("commands")
        if not isinstance(commands, list) or not all(isinstance(c, dict) for c in commands):
            raise ProtocolViolation("sync answer has no commands list of objects")
        return commands

    def start(self, command_id: str, execution_id: str) -> str:
        """``POST .../commands/{id}/start``: return the status (``running``/``cancelled``, R9)."""
        data = self._call(
            "POST", self._command_url(command_id, "start"), {"execution_id": execution_id}
        )
        status = data.get("status")
        if not isinstance(status, str):
            raise ProtocolViolation("start answer has no status string")
        return status

    def control(self, command_id: str) -> dict[str, Any]:
        """``GET .../commands/{id}/control``: ``{"status", "cancel_requested"}`` (R10)."""
        return self._call("GET", self._command_url(command_id, "control"), None)

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST .../commands/{id}/complete`` with the bounded completion (R11)."""
        return self._call("POST", self._command_url(command_id, "complete"), body)

    def __repr__(self) -> str:
        token = "***" if self._token is not None else None
        return f"RelayClient(base_url={mask_url(self.base_url)!r}, token={token!r})"
