"""D18 from the relay's side: the 100,000-character bound, as ``JSON.stringify`` counts.

The driver learns the execution id at the command's start (the server's record)
and shapes the Graph's result so that the completion the relay builds is exactly
100,000 or 100,001 UTF-16 code units long: ASCII, Japanese (one unit, three UTF-8
bytes a character) and emoji (two units, one code point). A first, small run
measures the relay's envelope (every member but the result and the execution id).
At 100,000 the whole result must arrive; at 100,001 none of it (all or nothing) —
and the server must have accepted the completion. Errors are cut to 2,000 units; a
failed Graph is posted ``failed`` with its error.

Two more cases close what those three alphabets leave open. Over the bound the
completion is the truncated form, marked ``result_truncated: true`` and without a
``result`` member (a ``result: null`` alone is a Graph that returned nothing). And the
bound is measured as ``JSON.stringify`` writes, not as another encoder does: a result
holding every character and number the common JSON encoders write differently
(:data:`ENCODER_SPECIALS`, :data:`ENCODER_NUMBERS`: Go's ``encoding/json`` escapes
``<``, ``>``, ``&``, U+2028 and U+2029; Python's ``json.dumps`` escapes non-ASCII and
spaces its separators; numbers are spelt ``1.0``, ``-0.0``, ``5e-07``,
``1000000000000000000000`` where ``JSON.stringify`` writes ``1``, ``0``, ``5e-7``,
``1e+21``) lands exactly on 100,000 and 100,001: every such encoder counts more, so
a relay measuring with one truncates a result that fits. A lone surrogate is not in
it: the spec does not promise one survives (RFC 8259 leaves its handling open, and a
relay in Go or Rust reads it as U+FFFD), so no check may send one.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_osfoundry.conformance import check, js_stringify_length
from pytest_osfoundry.conformance.relay import RelayConformance, RunPlan, RunRecord

LIMIT = 100_000
ERROR_LIMIT = 2_000
_EMPTY = {"text": ""}


ENCODER_SPECIALS = (
    "<>&'\u2028\u2029"  # raw in JSON.stringify; Go's encoding/json escapes all but '
    "\x00\x01\x08\x0c\x1f\n\t\"\\/\x7f"  # C0 escapes, quote, backslash, slash, DEL
    "é日"  # non-ASCII: one unit each, six under an ASCII-only encoder
)
"""The characters JSON encoders write differently (the escapes case's text begins with them)."""

ENCODER_NUMBERS: list[Any] = [10**21, 1e21, 1.0, -0.0, 5e-7, 0.1, 100]
"""Numbers JSON encoders spell differently: ``JSON.stringify`` writes
``1e+21,1e+21,1,0,5e-7,0.1,100``; the driver's answer writes them as its encoder does."""


def _fill(kind: str, units: int) -> str:
    if kind == "ascii":
        return "a" * units
    if kind == "japanese":
        return "日" * units
    return "😀" * (units // 2) + "a" * (units % 2)


def _shaped(kind: str, units: int) -> Any:
    """A result of ``kind`` whose ``JSON.stringify`` is ``units`` UTF-16 units long."""
    if kind == "escapes":
        skeleton = {"text": ENCODER_SPECIALS, "numbers": ENCODER_NUMBERS}
        pad = max(units - js_stringify_length(skeleton), 0)
        return {"text": ENCODER_SPECIALS + "a" * pad, "numbers": ENCODER_NUMBERS}
    return {"text": _fill(kind, max(units - js_stringify_length(_EMPTY), 0))}


class _Shaper:
    """The driver's planner: results shaped to land the completion on a target length."""

    def __init__(self, conf: RelayConformance, kind: str) -> None:
        self.conf = conf
        self.kind = kind
        self.targets: dict[str, int] = {}
        self.results: dict[str, Any] = {}
        self.overhead: int | None = None
        self.next_target: int | None = None
        self.shaped: dict[str, tuple[int, int]] = {}
        """command id -> the envelope's and the execution id's units it was shaped with."""

    def __call__(self, record: RunRecord) -> RunPlan:
        if record.command_id not in self.targets and self.next_target is not None:
            self.targets[record.command_id], self.next_target = self.next_target, None
        target = self.targets.get(record.command_id)
        if target is None or self.overhead is None:
            result: Any = {"text": "calibration"}
        else:
            starts = self.conf.requests("start", record.command_id)
            body = starts[-1].body if starts and isinstance(starts[-1].body, dict) else {}
            eid_units = js_stringify_length(str(body.get("execution_id", ""))) - 2
            self.shaped[record.command_id] = (self.overhead, eid_units)
            result = _shaped(self.kind, target - self.overhead - eid_units)
        self.results[record.command_id] = result
        return RunPlan(duration=0.05, result=result, total_tokens=12, reported_cost=0.5)

    def whole(self, command_id: str) -> str:
        """How long the relay's completion of ``command_id`` with the whole result would be,
        and from what: the envelope measured on the first run, the execution id the relay
        started the command with, the result."""
        overhead, eid_units = self.shaped.get(command_id, (0, 0))
        result = self.results.get(command_id)
        total = overhead + eid_units + js_stringify_length(result)
        return (
            f"with the whole result the completion would be {total:,} UTF-16 units as "
            f"JSON.stringify counts ({overhead:,} for the envelope the first run measured, "
            f"{eid_units:,} for the execution id, and a result of {_figures(result)})"
        )

    def calibrate(self, body: dict[str, Any]) -> None:
        eid = str(body.get("execution_id", ""))
        result = body.get("result")
        self.overhead = (
            js_stringify_length(body) - js_stringify_length(result) - (js_stringify_length(eid) - 2)
        )


def _figures(value: Any) -> str:
    """``value`` measured: UTF-16 units as ``JSON.stringify`` counts them, and UTF-8 bytes."""
    units = js_stringify_length(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{units:,} units ({size:,} UTF-8 bytes)"


def _posted(body: Any) -> str:
    """What the relay posted, measured, and whether it carried the result."""
    if not isinstance(body, dict):
        return f"a completion that is not a JSON object ({str(body)[:80]!r})"
    result = body.get("result")
    mark = f"result_truncated={body.get('result_truncated', '(absent)')!r}"
    if result is not None:
        carried = f"a result of {_figures(result)}"
    elif "result" in body:
        carried = f"result: null ({mark})"
    else:
        carried = f"no result ({mark})"
    return f"a completion of {_figures(body)} carrying {carried}"


def _bound(conf: RelayConformance, kind: str) -> None:
    sessions = conf.share(1)
    conf.start()
    shaper = _Shaper(conf, kind)
    conf.plan(shaper)
    gsid = sessions[0]["graph_session_id"]
    wait = 10 * conf.timing.expected_interval + 10
    first = conf.queue(gsid)
    calibration = conf.wait_delivered(first, timeout=wait)
    conf.expect(
        isinstance(calibration.body, dict)
        and calibration.body.get("result") == shaper.results.get(first),
        f"a small completed result did not arrive whole: {str(calibration.body)[:300]}",
    )
    assert isinstance(calibration.body, dict)
    shaper.calibrate(calibration.body)
    for target in (LIMIT, LIMIT + 1):
        shaper.next_target = target
        command_id = conf.queue(gsid)
        conf.wait_request(
            "complete",
            f"the completion of the {target:,}-character {kind} case",
            timeout=wait,
            command_id=command_id,
            statuses=lambda status: 200 <= status < 300 or status == 413,
        )
        refused = [r for r in conf.requests("complete", command_id) if r.status == 413]
        conf.expect(
            not refused,
            f"{kind}: the relay posted {_posted(refused[0].body) if refused else ''}, over "
            f"{LIMIT:,} units as JSON.stringify counts, and the server refused it with 413; "
            f"{shaper.whole(command_id)}: the bound counts UTF-16 code units, not bytes or "
            "code points",
        )
        body: Any = conf.delivered(command_id)[0].body
        sent = shaper.results.get(command_id)
        conf.notes.append(
            f"{kind}, {target:,}: {shaper.whole(command_id)}; the relay posted {_posted(body)}"
        )
        if target == LIMIT:
            conf.expect(
                body.get("result") == sent,
                f"{kind}: {shaper.whole(command_id)}, within the bound of {LIMIT:,}, but the "
                f"relay posted {_posted(body)}, not the whole result",
            )
        else:
            text = str(sent.get("text", "")) if isinstance(sent, dict) else ""
            conf.expect(
                body.get("result") is None,
                f"{kind}: {shaper.whole(command_id)}, one over the bound of {LIMIT:,}, but the "
                f"relay posted {_posted(body)}: over the bound the result goes whole or not at "
                "all, and here not at all",
            )
            conf.expect(
                text[:200] not in str(body),
                f"{kind}: {shaper.whole(command_id)}, one over the bound, and the relay posted "
                f"{_posted(body)}, with part of the result's text elsewhere in it",
            )
        conf.expect(
            body.get("status") == "completed",
            f"{kind}: the completion's status is {body.get('status')!r}; the Graph completed",
        )


@check(
    "D18-relay-bound-ascii",
    "An ASCII result landing the completion on exactly 100,000 characters is posted "
    "whole; at 100,001 none of it is posted, and the server accepts both.",
    area="relay",
)
def check_bound_ascii(osf_relay_conf: RelayConformance) -> None:
    _bound(osf_relay_conf, "ascii")


@check(
    "D18-relay-bound-japanese",
    "A Japanese result (one UTF-16 unit, three UTF-8 bytes a character) at exactly "
    "100,000 characters is posted whole; at 100,001 none of it.",
    area="relay",
)
def check_bound_japanese(osf_relay_conf: RelayConformance) -> None:
    _bound(osf_relay_conf, "japanese")


@check(
    "D18-relay-bound-emoji",
    "An emoji result (two UTF-16 units, one code point each) at exactly 100,000 "
    "characters is posted whole; at 100,001 none of it.",
    area="relay",
)
def check_bound_emoji(osf_relay_conf: RelayConformance) -> None:
    _bound(osf_relay_conf, "emoji")


@check(
    "D18-relay-bound-escapes",
    "A result holding every character and number JSON encoders write differently "
    "(<, >, &, ', U+2028, U+2029, control characters, non-ASCII; 1e21, 1.0, -0, 5e-7) "
    "at exactly 100,000 characters as JSON.stringify counts is posted whole; at 100,001 "
    "none of it.",
    area="relay",
)
def check_bound_escapes(osf_relay_conf: RelayConformance) -> None:
    _bound(osf_relay_conf, "escapes")


TRUNCATED_MARK = "result_truncated"


@check(
    "D18-relay-truncated-form",
    "A completion over the bound is posted in the truncated form: status completed, the "
    "execution id it started with, result_truncated: true, and no result member.",
    area="relay",
)
def check_truncated_form(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(1)
    conf.start()
    result = {"text": "a" * (LIMIT + 20_000)}
    conf.plan(lambda record: RunPlan(duration=0.05, result=result))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    body: Any = delivered.body if isinstance(delivered.body, dict) else {}
    posted = f"the relay posted {_posted(body)} for a result of {_figures(result)}"
    conf.expect(
        body.get(TRUNCATED_MARK) is True,
        f"{posted}, without {TRUNCATED_MARK}: true: over the bound the completion must say "
        "it was truncated (result: null alone is a Graph that returned nothing)",
    )
    conf.expect(
        "result" not in body,
        f"{posted}, marked truncated yet with a result member ({str(body.get('result'))[:80]}): "
        "the truncated form carries no result",
    )
    conf.expect(
        body.get("status") == "completed",
        f"the truncated completion's status is {body.get('status')!r}; the Graph completed",
    )
    starts = [r for r in conf.requests("start", command_id) if isinstance(r.body, dict)]
    started = {r.body.get("execution_id") for r in starts}
    conf.expect(
        body.get("execution_id") in started,
        f"the truncated completion's execution id {str(body.get('execution_id'))[:80]!r} is "
        "not the one the relay started the command with",
    )


def _failed(conf: RelayConformance, error: str) -> dict[str, Any]:
    sessions = conf.share(1)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=0.05, status="failed", result=None, error=error))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    body: Any = delivered.body if isinstance(delivered.body, dict) else {}
    conf.expect(
        body.get("status") == "failed",
        f"a failed Graph was posted with status {body.get('status')!r}, not 'failed'",
    )
    return dict(body)


@check(
    "D18-relay-failed",
    "A failed Graph is posted with status failed and its error, word for word.",
    area="relay",
)
def check_failed(osf_relay_conf: RelayConformance) -> None:
    error = "the Graph failed: node 3 (summarise) timed out"
    body = _failed(osf_relay_conf, error)
    osf_relay_conf.expect(
        body.get("error") == error,
        f"the failed completion's error is {str(body.get('error'))[:200]!r}, not {error!r}",
    )


@check(
    "D18-relay-error-cut",
    "An error of 2,500 characters is posted cut to its first 2,000.",
    area="relay",
)
def check_error_cut(osf_relay_conf: RelayConformance) -> None:
    error = "".join(f"line {i:04d}; " for i in range(250))[:2_500]
    body = _failed(osf_relay_conf, error)
    posted = str(body.get("error"))
    osf_relay_conf.expect(
        posted == error[:ERROR_LIMIT],
        f"the posted error is {len(posted):,} characters ({posted[:40]!r}...); an error of "
        f"{len(error):,} must be cut to its first {ERROR_LIMIT:,}",
    )


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _units(text: str) -> int:
    return len(_utf16(text)) // 2


def _straddling_error() -> str:
    """2,500 UTF-16 units of Japanese, ASCII and emoji; one emoji takes units 2,000 and
    2,001 (counting from 1), so the cut at 2,000 falls between its two halves."""
    chunk = "ノード 3 (要約) が時間切れです 😱 — "
    head = ""
    while _units(head + chunk) <= ERROR_LIMIT - 1:
        head += chunk
    head += "語" * (ERROR_LIMIT - 1 - _units(head))
    return head + "😀" + "語" * (2_500 - ERROR_LIMIT - 1)


def _measured(text: str) -> str:
    units = _units(text)
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{units:,} UTF-16 units, {len(text):,} code points, {size:,} UTF-8 bytes"


#: What a relay may put in unit 2,000 when the cut splits an emoji: its first half as
#: is (``slice(0, 2000)`` posted by a JSON writer that escapes a lone surrogate), or
#: the replacement an encoder writes for a lone surrogate (U+FFFD, or ``?``).
_HALF_EMOJI_STANDS = ("\ufffd", "?")


def _cut_problem(error: str, posted: str) -> str | None:
    """Why ``posted`` is not ``error`` cut at 2,000 UTF-16 units (``None``: it is)."""
    full, sent = _utf16(error), _utf16(posted)
    head = full[: 2 * (ERROR_LIMIT - 1)]
    if sent == head:
        return None  # the emoji dropped whole: 1,999 units
    halves = {full[2 * (ERROR_LIMIT - 1) : 2 * ERROR_LIMIT]} | {
        c.encode("utf-16-le") for c in _HALF_EMOJI_STANDS
    }
    if len(sent) == 2 * ERROR_LIMIT and sent[: len(head)] == head and sent[len(head) :] in halves:
        return None  # 2,000 units: the emoji's first half, or what an encoder made of it
    if posted == error[:ERROR_LIMIT]:
        reading = "it is the error's first 2,000 code points (an emoji counted as 1)"
    elif posted == error.encode("utf-8")[:ERROR_LIMIT].decode("utf-8", "ignore"):
        reading = "it is the error cut at 2,000 UTF-8 bytes"
    elif sent == full[: 2 * (ERROR_LIMIT + 1)]:
        reading = "the emoji that straddles the cut was kept whole (2,001 units)"
    elif sent == full:
        reading = "it is the whole error, uncut"
    elif full.startswith(sent):
        reading = f"it is the error's first {len(sent) // 2:,} units"
    else:
        reading = "it is not a beginning of the error"
    return (
        f"the posted error is {_measured(posted)}; the Graph's error ({_measured(error)}, "
        f"an emoji across units 2,000 and 2,001) must be cut to at most {ERROR_LIMIT:,} "
        "UTF-16 units as JavaScript's slice(0, 2000) counts them: its first 1,999 units, "
        "then nothing or one unit standing for the emoji's first half; " + reading
    )


@check(
    "D18-relay-error-cut-utf16",
    "An error of 2,500 UTF-16 units (Japanese, emoji; one emoji across the cut) is "
    "posted cut to at most 2,000 units, as JavaScript counts them: its first 1,999, then "
    "nothing or one unit for the split emoji's first half.",
    area="relay",
)
def check_error_cut_utf16(osf_relay_conf: RelayConformance) -> None:
    error = _straddling_error()
    body = _failed(osf_relay_conf, error)
    posted = body.get("error")
    if not isinstance(posted, str):
        osf_relay_conf.fail(f"the failed completion's error is {str(posted)[:80]!r}, not a text")
    assert isinstance(posted, str)
    problem = _cut_problem(error, posted)
    osf_relay_conf.expect(problem is None, str(problem))
