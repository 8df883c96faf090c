"""What the desktop relay sends the reference server, validated: shared sessions, completions.

Each function takes the JSON a relay request carried and returns the plain record
the state keeps, or raises :class:`~pytest_osfoundry.server._records.BadRequest`
naming the field that is wrong (D10, R11, D18: the error is cut to 2,000 characters).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pytest_osfoundry._checks import is_number
from pytest_osfoundry._vocabulary import ERROR_LIMIT, TERMINAL_STATUSES, cut_error
from pytest_osfoundry.server._records import RELAY_REPORTED, SESSION_FIELDS, BadRequest

__all__ = ["copied", "session_record", "validate_completion"]


def session_record(raw: Any, index: int) -> dict[str, Any]:
    """A shared session as a sync uploads it: the six documented fields (D10)."""
    if not isinstance(raw, (dict, Mapping)):  # dict first: no ABC check
        raise BadRequest(f"sessions[{index}] must be an object")
    gsid = raw.get("graph_session_id")
    if not isinstance(gsid, str) or not gsid:
        raise BadRequest(f"sessions[{index}].graph_session_id must be a non-empty string")
    slug = raw.get("slug")
    if not isinstance(slug, str):
        raise BadRequest(f"sessions[{index}].slug must be a string")
    for name in ("name", "description", "status"):
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"sessions[{index}].{name} must be a string")
    version = raw.get("version")
    if version is not None and not (isinstance(version, str) or is_number(version)):
        raise BadRequest(f"sessions[{index}].version must be a number or a string")
    return {name: raw.get(name) for name in SESSION_FIELDS}  # checked: immutable scalars


def validate_completion(body: Mapping[str, Any]) -> dict[str, Any]:
    """R11/D18: the completion's fields and their types; the error is cut to 2,000."""
    status = body.get("status")
    if not isinstance(status, str) or status not in TERMINAL_STATUSES:
        raise BadRequest(f"status must be one of {', '.join(TERMINAL_STATUSES)}")
    unknown = set(body) - {"status", *RELAY_REPORTED}
    if unknown:
        raise BadRequest(f"unknown completion fields: {', '.join(sorted(unknown))}")
    out: dict[str, Any] = {"status": status}
    execution_id = body.get("execution_id")
    if execution_id is not None:
        if not isinstance(execution_id, str):
            raise BadRequest("execution_id must be a string")
        out["execution_id"] = execution_id
    truncated = body.get("result_truncated")
    if truncated is not None and truncated is not False:
        if truncated is not True:
            raise BadRequest("result_truncated must be true when present")
        if "result" in body:
            raise BadRequest("result and result_truncated: true are exclusive (D18)")
        out["result_truncated"] = True
    elif "result" in body:
        out["result"] = copied(body["result"])
    error = body.get("error")
    if error is not None:
        if not isinstance(error, str):
            raise BadRequest("error must be a string")
        out["error"] = cut_error(error, ERROR_LIMIT)
    for name in ("total_tokens", "reported_cost"):
        value = body.get(name)
        if value is None:
            continue
        if not is_number(value) or value < 0:
            raise BadRequest(f"{name} must be a non-negative number")
        out[name] = value
    return out


_ATOMS = (str, int, float, bool, type(None))


def copied(value: Any) -> Any:
    """A deep copy of a JSON value: its dicts and lists new, an immutable scalar its own
    copy; anything else (a tuple) through :func:`copy.deepcopy`.

    What the server stores or answers (sessions, arguments, results, the tool
    listing) is only ever JSON, so this walk does what :func:`copy.deepcopy` would
    without its memo and dispatch, which cost more than the copy itself on these
    payloads (``benchmarks/bench_json_copy.py`` measures both)."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)
