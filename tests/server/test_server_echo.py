"""No token in anything the server echoes (issue 39.4): one test per echo site.

Each site quotes what a request sent (a field that breaks MCP's schema, a header
value, a method, a path, an ``Origin``): a token put there by the caller comes back
as ``***`` in the answer and in every log line, whatever the quoting (``repr`` of a
value with both kinds of quotes, JSON escapes). The token used is one the server
issued (another agent's) and, separately, an unknown credential the request carries
in its own ``Authorization`` header. ``osfoundry-fake serve``'s stderr is searched in
``test_server_cli.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._clock_admin import ClockAdmin
from tests.server.osf_server_kit import MCP, RELAY, Srv

#: Another agent's token, with both quote characters and a backslash: ``repr`` and
#: JSON quote it differently from the raw text.
TOKEN = "osf-echo'sec\"ret\\tok3n"
#: A credential the server never issued, carried in the request's own header.
UNKNOWN = "unknown-bearer-Secret-42"
MODERN = "2026-07-28"
ADMIN = "osf_admin_0123456789abcdef"


@pytest.fixture
def srv() -> Srv:
    return Srv(provision={"other_agent_token": TOKEN})


def _modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


def _meta(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def _call(srv: Srv, params: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return srv.rpc("tools/call", params, srv.agent, headers=headers)


# Each site: the request that makes the server quote TOKEN back.
SITES: dict[str, Callable[[Srv], Response]] = {
    # The exact case: a progressToken that is an object (legacy era).
    "legacy-schema-refusal": lambda s: _call(
        s,
        {
            "name": "get_graph_run",
            "arguments": {"command_id": "x"},
            "_meta": {"progressToken": {"t": TOKEN}},
        },
    ),
    "modern-schema-refusal": lambda s: _call(
        s,
        {
            "name": "get_graph_run",
            "arguments": {"command_id": "x"},
            "_meta": {**_meta(), "progressToken": {"t": TOKEN}},
        },
        _modern_headers("tools/call", "get_graph_run"),
    ),
    "modern-header-mismatch": lambda s: _call(
        s,
        {"name": "get_graph_run", "arguments": {"command_id": "x"}, "_meta": _meta()},
        _modern_headers("tools/call", TOKEN),
    ),
    "modern-unsupported-version": lambda s: s.rpc(
        "tools/list",
        {"_meta": _meta(TOKEN)},
        s.agent,
        headers={**_modern_headers("tools/list"), "mcp-protocol-version": TOKEN},
    ),
    "modern-unknown-method": lambda s: s.rpc(
        TOKEN, {"_meta": _meta()}, s.agent, headers=_modern_headers(TOKEN)
    ),
    "legacy-unsupported-version": lambda s: s.rpc(
        "tools/list", {}, s.agent, headers={"mcp-protocol-version": TOKEN}
    ),
    "legacy-unknown-method": lambda s: s.rpc(TOKEN, {}, s.agent),
    "unknown-tool": lambda s: _call(s, {"name": TOKEN, "arguments": {}}),
    "tool-arguments": lambda s: _call(
        s, {"name": "get_graph_run", "arguments": {"command_id": "x", TOKEN: 1}}
    ),
    "tool-argument-value": lambda s: _call(
        s,
        {
            "name": "run_graph_session",
            "arguments": {"graph_session_id": "g", "idempotency_key": TOKEN * 10},
        },
    ),
    "origin": lambda s: s.rpc("ping", {}, s.agent, headers={"origin": f"http://{TOKEN}.test"}),
    "unknown-path": lambda s: s.http("GET", f"/{TOKEN}"),
    "relay-unknown-path": lambda s: s.relay("GET", f"/{TOKEN}"),
    "relay-command-id": lambda s: s.relay("GET", f"/commands/{TOKEN}/control"),
    "relay-project-id": lambda s: s.relay("POST", "/sync", {"project_id": TOKEN, "sessions": []}),
}


@pytest.mark.parametrize("site", sorted(SITES))
def test_an_echoed_token_is_masked_in_the_answer_and_the_log(
    srv: Srv, site: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="pytest_osfoundry")
    reply = SITES[site](srv)
    body = reply.body.decode("utf-8")
    assert reply.status != 200 or "error" in body or '"isError":true' in body, body
    assert "***" in body, f"{site}: the answer no longer quotes the request at all: {body}"
    _assert_masked(TOKEN, body + caplog.text)


def test_the_requests_own_unknown_credential_is_masked(srv: Srv) -> None:
    reply = srv.http("GET", f"/{UNKNOWN}", headers={"authorization": f"Bearer {UNKNOWN}"})
    assert reply.status == 404
    assert UNKNOWN not in reply.body.decode() and "***" in reply.body.decode()


def test_an_internal_error_logs_a_masked_traceback(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(ReferenceServer):
        def _dispatch(self, request: Request) -> Response:
            raise RuntimeError(f"kit bug while reading {request.body.decode()}")

    server = Broken(VirtualClock())
    made = server.provision(other_agent_token=TOKEN)
    caplog.set_level(logging.ERROR, logger="pytest_osfoundry.server")
    reply = server(
        Request(
            "POST",
            f"{MCP}/{TOKEN}",
            {"authorization": f"Bearer {UNKNOWN}"},
            json.dumps({"t": TOKEN, "desk": made.desktop_token}).encode(),
        )
    )
    assert reply.status == 500 and TOKEN.encode() not in reply.body
    assert "RuntimeError: kit bug while reading" in caplog.text  # the traceback is there
    _assert_masked(TOKEN, caplog.text)
    _assert_masked(made.desktop_token, caplog.text)
    assert UNKNOWN not in caplog.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (f"/_osf/{TOKEN}", b""),
        ("/_osf/clock/advance", json.dumps({TOKEN: 1}).encode()),
        ("/_osf/clock/advance", json.dumps({"seconds": TOKEN}).encode()),
        ("/_osf/clock/advance", json.dumps({"seconds": ADMIN}).encode()),
    ],
)
def test_the_clock_admin_path_masks_what_it_echoes(path: str, body: bytes) -> None:
    clock = VirtualClock()
    server = ReferenceServer(clock)
    server.provision(other_agent_token=TOKEN)
    door = ClockAdmin(server, clock, ADMIN, lambda: True, mask=server.tokens.mask)
    method = "GET" if path.count("/") == 2 else "POST"
    reply = door(Request(method, path, {"authorization": f"Bearer {ADMIN}"}, body))
    text = reply.body.decode()
    assert reply.status in (400, 404) and "***" in text, text
    _assert_masked(TOKEN, text)
    assert ADMIN not in text


def test_the_mask_knows_revoked_tokens_and_every_quoting() -> None:
    server = ReferenceServer(VirtualClock())
    made = server.provision(other_agent_token=TOKEN)
    server.tokens.revoke(made.other_agent_token)
    for shown in (TOKEN, repr(TOKEN), json.dumps(TOKEN), repr({"t": TOKEN})):
        masked = server.tokens.mask(f"before {shown} after")
        _assert_masked(TOKEN, masked)
        assert masked.startswith("before ") and masked.endswith(" after")


def test_the_cli_log_filter_masks_tracebacks() -> None:
    from pytest_osfoundry.relay._cli import MaskingFilter

    try:
        raise ValueError(f"bad {TOKEN}")
    except ValueError:
        import sys

        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "failed with %s", (TOKEN,), sys.exc_info()
        )
    assert MaskingFilter(lambda text: text.replace(TOKEN, "***")).filter(record)
    line = logging.Formatter().format(record)
    assert TOKEN not in line and "ValueError: bad ***" in line and "failed with ***" in line


def _assert_masked(secret: str, text: str) -> None:
    __tracebackhide__ = True
    for form in (secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]):
        assert form not in text, f"{form!r} is echoed: {text[:2000]}"
    assert json.dumps(repr(secret)[1:-1])[1:-1] not in text  # repr inside a JSON body


def test_relay_paths_still_name_the_kind_of_refusal(srv: Srv) -> None:
    """Masking leaves the rest of a message alone: the client still learns what failed."""
    reply = srv.relay("GET", f"/commands/{TOKEN}/control")
    assert reply.status == 404 and reply.json() == {"error": "command *** not found"}
    assert srv.relay("GET", "/nothing").json() == {"error": f"no relay endpoint at {RELAY}/nothing"}
