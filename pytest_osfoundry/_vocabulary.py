"""The domain's words, numbers and shapes, defined once for the whole package.

Every module of the package (server, relay, engine, agent, simulator, clients, the
world) takes these from here; nothing else spells a status, an error message, a
relay path, a D18 bound or an id pattern. The conformance suite deliberately does
*not* import this module: it keeps its own copy of the texts it asserts, so that a
wrong constant here cannot make the suite agree with a wrong server.

* the package version and the spec revision it implements;
* run statuses, and which of them are terminal (SPEC D5, R6);
* the error messages the spec fixes word for word (D5, D6, D7, D13);
* the tool names and scopes (D3, R2), and the MCP protocol revisions (R1; defined
  with the rest of MCP's words in :mod:`pytest_osfoundry._mcp_vocabulary`);
* the relay API's paths (D10, R9-R11);
* the bounds of D18 and the one way to cut an error to its bound;
* the id shapes: command ids are UUIDs (D9, D15), graph session ids ``gs_`` + 32
  lowercase hex characters (D2);
* the cadences the seed measured (the desktop's 20 s pass, its 3 s control poll).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final
from urllib.parse import quote

from pytest_osfoundry._checks import check_count
from pytest_osfoundry._jslength import js_length
from pytest_osfoundry._mcp_vocabulary import ALL_VERSIONS, LEGACY_VERSIONS, MODERN_VERSIONS

__all__ = [
    "ALL_VERSIONS",
    "CANCELLED",
    "CANCEL_GRAPH_RUN",
    "COMPLETED",
    "CONTROL_POLL_SECONDS",
    "ERROR_LIMIT",
    "FAILED",
    "GET_GRAPH_RUN",
    "GRAPH_SESSION_ID_RE",
    "KEY_CONFLICT",
    "LEGACY_VERSIONS",
    "LIST_GRAPH_SESSIONS",
    "MAX_LIST_LIMIT",
    "MAX_SYNC_SESSIONS",
    "MODERN_VERSIONS",
    "NO_LONGER_SHARED",
    "POLL_AFTER_SECONDS",
    "PROJECT_NOT_FOUND",
    "QUEUED",
    "READ_SCOPE",
    "RELAY_ACTIONS",
    "RELAY_COMMANDS",
    "RELAY_INTERVAL_SECONDS",
    "RELAY_PREFIX",
    "RELAY_SYNC",
    "RESULT_LIMIT",
    "RUNNING",
    "RUN_GRAPH_SESSION",
    "RUN_NOT_FOUND",
    "RUN_SCOPE",
    "RUN_STATUSES",
    "SESSION_NOT_FOUND",
    "SPEC_REVISION",
    "TERMINAL_STATUSES",
    "UUID_RE",
    "VERSION",
    "cut_error",
    "relay_command_path",
]

# ---------------------------------------------------------------------- the package
#: The package version (``pyproject.toml`` reads it from here; the reference server
#: reports it as its ``serverInfo.version``).
VERSION: Final = "0.1.0"
#: The revision of the osFoundry behaviour the spec (conformance/spec.md) describes.
SPEC_REVISION: Final = "2026-11-08"

# ---------------------------------------------------------------------- run statuses
QUEUED: Final = "queued"
RUNNING: Final = "running"
COMPLETED: Final = "completed"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
#: Every status a run can show, in the order a run passes through them (D5, R6).
RUN_STATUSES: Final = (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED)
#: The statuses a run never leaves; also the only ones a completion may carry (R11)
#: and the ones an engine run ends with.
TERMINAL_STATUSES: Final = (COMPLETED, FAILED, CANCELLED)

# ---------------------------------------------------------------------- messages
#: D5/D6: an unknown run and another agent's run are refused with the same words.
RUN_NOT_FOUND: Final = "Graph run not found or access removed"
#: D3/D6: a session not shared with any project the agent is connected to.
SESSION_NOT_FOUND: Final = "Graph session not found or access removed"
#: D6: a project the agent is not connected to, or that does not exist.
PROJECT_NOT_FOUND: Final = "Project not found or access removed"
#: D7: an idempotency key reused with other arguments.
KEY_CONFLICT: Final = "idempotency_key was already used with different arguments"
#: D13: the error of a command whose session was unshared before it ran.
NO_LONGER_SHARED: Final = "Graph session is no longer shared with this project"

# ---------------------------------------------------------------------- MCP tools
RUN_GRAPH_SESSION: Final = "run_graph_session"
LIST_GRAPH_SESSIONS: Final = "list_graph_sessions"
GET_GRAPH_RUN: Final = "get_graph_run"
CANCEL_GRAPH_RUN: Final = "cancel_graph_run"
READ_SCOPE: Final = "osfoundry:read"
RUN_SCOPE: Final = "osfoundry:run"
#: R4: what a ticket's ``poll_after_seconds`` says.
POLL_AFTER_SECONDS: Final = 20
#: D4/R8: ``list_graph_sessions`` shows at most this many sessions (its default ``limit``).
MAX_LIST_LIMIT: Final = 50

# ---------------------------------------------------------------------- the relay API
#: The relay API's root under the relay base URL (D10).
RELAY_PREFIX: Final = "/external-assistants/graph-relays"
#: ``POST``: upload the shared sessions, receive the queued commands (D10).
RELAY_SYNC: Final = RELAY_PREFIX + "/sync"
#: The folder of per-command paths: ``{RELAY_COMMANDS}{command_id}/{action}``.
RELAY_COMMANDS: Final = RELAY_PREFIX + "/commands/"
#: Each per-command action and its HTTP method (R9, R10, R11).
RELAY_ACTIONS: Final = {"start": "POST", "control": "GET", "complete": "POST"}
#: D10: the most sessions one sync may upload.
MAX_SYNC_SESSIONS: Final = 100
#: The desktop's pass interval and its control poll while a run is active (D11, D12).
RELAY_INTERVAL_SECONDS: Final = 20.0
CONTROL_POLL_SECONDS: Final = 3.0


@lru_cache(maxsize=4096)
def relay_command_path(command_id: str, action: str) -> str:
    """The path of ``action`` on one command; the id is percent-quoted into one segment.

    Cached (a pure function of two short strings): the relay asks for one command's
    control path every 3 s while it runs, and ``quote`` costs about ten times a
    cache hit (``osfoundry-sim`` makes hundreds of thousands of relay calls).
    """
    if action not in RELAY_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(RELAY_ACTIONS)}; got {action!r}")
    return f"{RELAY_COMMANDS}{quote(command_id, safe='')}/{action}"


# ---------------------------------------------------------------------- D18 bounds
#: The most characters (``JSON.stringify(completion).length``) a completion may take
#: and still carry its result; the server refuses a longer body with 413 (D18, R11).
RESULT_LIMIT: Final = 100_000
#: The most characters (UTF-16 code units) of an error (D18, R6).
ERROR_LIMIT: Final = 2_000


def cut_error(error: str, limit: int = ERROR_LIMIT) -> str:
    """``error`` cut to at most ``limit`` UTF-16 code units, never splitting a pair.

    Returns ``error`` itself when it already fits. A character outside the BMP that
    would straddle the cut is dropped whole, so the result may be one unit shorter
    than ``limit``. (A Python string holding a high and a low surrogate as two code
    points is treated the same way: the pair is never split.)
    """
    if not isinstance(error, str):
        raise TypeError(f"error must be a str, got {type(error).__name__}")
    check_count(limit, "limit")
    if len(error) <= limit and (error.isascii() or js_length(error) <= limit):
        return error
    # Each character is at least one code unit, so the cut lies within error[:limit].
    prefix = error[:limit]
    if js_length(prefix) <= limit:
        cut = prefix
    else:
        units = 0
        end = 0
        for ch in prefix:
            width = 2 if ch > "\uffff" else 1
            if units + width > limit:
                break
            units += width
            end += 1
        cut = prefix[:end]
    if (
        cut
        and "\ud800" <= cut[-1] <= "\udbff"
        and len(error) > len(cut)
        and "\udc00" <= error[len(cut)] <= "\udfff"
    ):
        cut = cut[:-1]
    return cut


# ---------------------------------------------------------------------- id shapes
#: D2: a graph session id.
GRAPH_SESSION_ID_RE: Final = re.compile(r"gs_[0-9a-f]{32}")
#: D9: a command id, the canonical 8-4-4-4-12 hex form of a UUID.
UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
