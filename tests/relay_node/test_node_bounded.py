"""``bounded.mjs`` agrees with the kit's ``bounded_completion`` case for case (D18).

One Node process computes every case (the JSON cases go in on stdin, the bodies come
back on stdout); the kit's Python reading of the rule is the oracle.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from pytest_osfoundry.relay._bounded import Envelope, bounded_completion
from tests.relay_node._node import NO_NODE, NODES, ROOT

BOUNDED = (ROOT / "examples" / "relay-node" / "bounded.mjs").as_uri()
SCRIPT = f"""
import {{ boundedCompletion }} from {json.dumps(BOUNDED)};
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {{ text += chunk; }});
process.stdin.on('end', () => {{
  const out = JSON.parse(text).map((c) => boundedCompletion({{
    executionId: c.execution_id, status: c.status, result: c.result,
    totalTokens: c.total_tokens, reportedCost: c.reported_cost, error: c.error,
  }}));
  process.stdout.write(JSON.stringify(out));
}});
"""


def _fill(char: str, total: int, envelope: Envelope) -> str:
    """A result text putting ``envelope``'s completion at exactly ``total`` units."""
    room = total - envelope.overhead()
    width = len(json.dumps(char, ensure_ascii=False).encode("utf-16-le")) // 2 - 2
    return char * (room // width) + "a" * (room % width)


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    plain = Envelope("exec_" + "0" * 32, "completed", 12, 0.5)
    with_error = Envelope("x", "failed", None, None, "boom")
    for envelope in (plain, with_error):
        for char in ("a", "日", "😀", "\n", "\u0001", '"', "é"):
            for total in (99_999, 100_000, 100_001):
                cases.append(
                    {
                        "execution_id": envelope.execution_id,
                        "status": envelope.status,
                        "result": _fill(char, total, envelope),
                        "total_tokens": envelope.total_tokens,
                        "reported_cost": envelope.reported_cost,
                        "error": envelope.error,
                    }
                )
    for error in ("x" * 2001, "😀" * 1001, "a" + "😀" * 1000, "é" * 1999 + "😀", "short"):
        cases.append({"execution_id": "e", "status": "failed", "result": None, "error": error})
    cases.append({"execution_id": "e", "status": "cancelled", "result": {"nested": [1, 2.5, None]}})
    return cases


@pytest.mark.skipif(not NODES, reason=NO_NODE)
def test_bounded_mjs_matches_the_kit_on_every_case() -> None:
    cases = _cases()
    done = subprocess.run(
        [NODES[0][1], "--input-type=module", "-e", SCRIPT],
        input=json.dumps(cases, ensure_ascii=False),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert len(got) == len(cases)
    truncated = 0
    for case, body in zip(cases, got, strict=True):
        expected = bounded_completion(
            execution_id=case["execution_id"],
            status=case["status"],
            result=case.get("result"),
            total_tokens=case.get("total_tokens"),
            reported_cost=case.get("reported_cost"),
            error=case.get("error"),
        )
        assert body == expected, {k: str(v)[:80] for k, v in case.items()}
        truncated += bool(body.get("result_truncated"))
    assert truncated == 14, "each alphabet and envelope is cut at 100,001, not before"
