"""Bounded results (D18) and the 100,000-character completion bound (R11), as stored and served.

Completions are built as the relay builds them
(:func:`~pytest_osfoundry.relay.bounded_completion`): the boundary cases are
exactly 100,000 characters as JavaScript's ``JSON.stringify(...).length`` counts
them (UTF-16 code units: a Japanese character counts 1, an emoji 2, whatever their
size in bytes), and one more is one too many.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_osfoundry.conformance import Conformance, check, js_stringify_length, started_run
from pytest_osfoundry.conformance.expected import COMPLETED, RESULT_LIMIT, RUNNING
from pytest_osfoundry.relay import Envelope, max_result_text


def _running(conf: Conformance) -> tuple[str, Envelope]:
    __tracebackhide__ = True
    command_id = started_run(conf)
    return command_id, Envelope(execution_id=conf.desktop.execution_id(command_id))


def _full(envelope: Envelope, result: str) -> dict[str, Any]:
    """The untruncated completion (even when over the bound, to test the server's check)."""
    return {
        "execution_id": envelope.execution_id,
        "status": COMPLETED,
        "result": result,
        "total_tokens": 0,
        "reported_cost": 0,
    }


def _post(
    conf: Conformance, command_id: str, body: dict[str, Any], raw: bytes | None = None
) -> int:
    __tracebackhide__ = True
    reply = conf.desktop.raw("complete", command_id, body, raw_body=raw)
    conf.wire.decisive()
    if 200 <= reply.status < 300:
        conf.runs.done(command_id)
    return reply.status


def _expect_served_whole(conf: Conformance, command_id: str, result: str, what: str) -> None:
    __tracebackhide__ = True
    served = conf.agent.view(command_id).get("result")
    conf.expect(
        served == result,
        f"{what}: the result is served with "
        f"{len(served) if isinstance(served, str) else repr(served)[:80]} characters, "
        f"not whole ({len(result)} characters)",
    )


def _boundary(conf: Conformance, char: str, what: str) -> None:
    __tracebackhide__ = True
    command_id, envelope = _running(conf)
    text = char * max_result_text(char, envelope)
    body = envelope.completion(text)
    assert "result" in body and js_stringify_length(body) == RESULT_LIMIT
    status = _post(conf, command_id, body)
    size = len(json.dumps(body, ensure_ascii=False).encode())
    conf.expect(
        200 <= status < 300,
        f"{what}: a completion of exactly {RESULT_LIMIT:,} characters "
        f"({size:,} bytes) got HTTP {status}",
    )
    _expect_served_whole(conf, command_id, text, what)


@check(
    "D18-boundary-served-whole",
    "A completion of exactly 100,000 characters (ASCII result) is accepted and its result "
    "served whole.",
)
def check_boundary_served_whole(osf_conf: Conformance) -> None:
    _boundary(osf_conf, "a", "ASCII at the boundary")


@check(
    "D18-boundary-japanese",
    "A completion of exactly 100,000 characters whose result is Japanese text (about "
    "300,000 UTF-8 bytes) is accepted and served whole.",
)
def check_boundary_japanese(osf_conf: Conformance) -> None:
    _boundary(osf_conf, "日", "Japanese at the boundary")


@check(
    "D18-truncated-no-partial",
    "A result_truncated completion is served with result_truncated true and no result; "
    "a completion carrying both is refused or served without the partial result.",
    schedule="long-chain",
)
def check_truncated_no_partial(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, envelope = _running(c)
    status = _post(
        c,
        command_id,
        {"execution_id": envelope.execution_id, "status": COMPLETED, "result_truncated": True},
    )
    c.expect(200 <= status < 300, f"a result_truncated completion got HTTP {status}")
    view = c.agent.view(command_id)
    c.expect(
        view.get("result_truncated") is True,
        f"result_truncated should be served as true, got {view.get('result_truncated')!r}",
    )
    c.expect(
        "result" not in view,
        f"a result is served beside result_truncated: {json.dumps(view.get('result'))[:120]}",
    )
    command_id, envelope = _running(c)
    status = _post(
        c,
        command_id,
        {
            "execution_id": envelope.execution_id,
            "status": COMPLETED,
            "result": "the first part of a long resu",
            "result_truncated": True,
        },
    )
    if 400 <= status < 500:
        c.expect.note(f"a completion with both was refused with HTTP {status}")
        return
    c.expect(200 <= status < 300, f"a completion with both got HTTP {status}")
    view = c.agent.view(command_id)
    c.expect(
        "result" not in view or view.get("result_truncated") is not True,
        f"a partial result is served beside result_truncated: "
        f"{json.dumps(view.get('result'))[:120]}",
    )


@check(
    "R11-oversized-413",
    "A completion of 100,001 characters gets HTTP 413 and the run stays running with no result.",
    area="truncation",
)
def check_oversized_413(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, envelope = _running(c)
    body = _full(envelope, "a" * (max_result_text("a", envelope) + 1))
    assert js_stringify_length(body) == RESULT_LIMIT + 1
    status = _post(c, command_id, body)
    c.expect.equal(status, 413, f"HTTP status of a {RESULT_LIMIT + 1:,}-character completion")
    view = c.agent.view(command_id)
    c.expect.equal(view.get("status"), RUNNING, "the run's status after the 413")
    c.expect("result" not in view, "the refused completion's result is served")


@check(
    "R11-size-utf16-units",
    "The bound counts UTF-16 code units: with emoji (2 each) a 100,000-unit completion is "
    "accepted and served whole, a 100,001-unit one gets HTTP 413.",
    area="truncation",
    schedule="long-chain",
)
def check_size_utf16_units(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, envelope = _running(c)
    room = RESULT_LIMIT - envelope.overhead()
    emoji = room // 4
    text = "🎉" * emoji + "a" * (room - 2 * emoji)
    body = _full(envelope, text)
    assert js_stringify_length(body) == RESULT_LIMIT
    status = _post(c, command_id, body)
    c.expect(
        200 <= status < 300,
        f"a completion of exactly {RESULT_LIMIT:,} UTF-16 units ({emoji:,} emoji) got "
        f"HTTP {status}",
    )
    _expect_served_whole(c, command_id, text, "emoji at the boundary")
    command_id, envelope = _running(c)
    room = RESULT_LIMIT - envelope.overhead()
    text = "🎉" * emoji + "a" * (room - 2 * emoji + 1)
    body = _full(envelope, text)
    assert js_stringify_length(body) == RESULT_LIMIT + 1
    status = _post(c, command_id, body)
    c.expect.equal(
        status,
        413,
        f"HTTP status of a {RESULT_LIMIT + 1:,}-unit completion "
        f"({len(json.dumps(body, ensure_ascii=False)):,} code points)",
    )


@check(
    "R11-size-parsed-not-raw",
    "The bound is measured on the parsed body: a completion of exactly 100,000 characters "
    "sent with every non-ASCII character escaped (\\uXXXX) is accepted.",
    area="truncation",
)
def check_size_parsed_not_raw(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, envelope = _running(c)
    text = "日" * max_result_text("日", envelope)
    body = envelope.completion(text)
    raw = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode()
    status = _post(c, command_id, body, raw)
    c.expect(
        200 <= status < 300,
        f"a {RESULT_LIMIT:,}-character completion sent as {len(raw):,} escaped bytes got "
        f"HTTP {status}",
    )
    _expect_served_whole(c, command_id, text, "escaped Japanese at the boundary")
