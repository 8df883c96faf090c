"""The Node example relay's answers to a start (R14), one case at a time.

One Node process runs every case: a ``Relay`` from ``relay.mjs`` with a fake relay
API whose start answers follow a script (``lost``: no answer, ``503``, ``401``, ``404``,
``409``, or a status the server answered), a fake engine and an outbox in memory, at
a 50 ms interval until a number of passes have begun. The fake server applies the first
start it is sent, lost or not (a sync then hands the command out no more), as the
reference server does. Each case's record comes back on stdout.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.relay_node._node import NO_NODE, NODES, ROOT

RELAY = (ROOT / "examples" / "relay-node" / "relay.mjs").as_uri()
COMMAND_ID = "3f2c1a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
SCRIPT = f"""
import {{ Relay, HttpError, RequestError }} from {json.dumps(RELAY)};
const COMMAND = {{ command_id: {json.dumps(COMMAND_ID)}, graph_session_id: 'gs1', slug: 's',
  arguments: {{}} }};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runCase(answers, passes) {{
  const record = {{ pass: 0, starts: [], syncs: 0, runs: 0, completions: [], lines: [] }};
  let applied = false;
  const api = {{
    async sync() {{ record.syncs += 1; return applied ? [] : [COMMAND]; }},
    async start(commandId, executionId) {{
      record.starts.push({{ executionId, pass: record.pass }});
      applied = true;
      const answer = answers.length > 1 ? answers.shift() : answers[0];
      if (answer === 'lost') throw new RequestError('POST', 'start', 'dropped');
      if (typeof answer === 'number') throw new HttpError('POST', 'start', answer);
      return answer;
    }},
    async control() {{ return {{ cancel_requested: false }}; }},
    async complete(commandId, body) {{ record.completions.push(body); return {{}}; }},
  }};
  const entries = new Map();
  const outbox = {{
    put: (id, body) => entries.set(id, body), remove: (id) => entries.delete(id),
    has: (id) => entries.has(id), items: () => [...entries],
  }};
  const sharing = {{ read: async () => [{{ project_id: 'p1', enabled: true,
    sessions: [{{ graph_session_id: 'gs1', slug: 's' }}] }}] }};
  const engine = {{ start: async () => {{
    record.runs += 1;
    const done = Promise.resolve({{ status: 'completed', result: 1 }});
    return {{ done, cancel: async () => {{}} }};
  }} }};
  const relay = new Relay({{ api, sharing, engine, outbox, interval: 0.05, controlPoll: 0.001,
    log: (line) => {{
      record.lines.push(line);
      if (/ pass - /.test(line)) record.pass += 1;
    }} }});
  relay.start();
  while (record.pass <= passes) await sleep(5);
  relay.stop();
  await sleep(30);
  record.unanswered = relay.unanswered.size;
  return record;
}}

const cases = JSON.parse(process.argv[1]);
const out = {{}};
for (const [name, answers, passes] of cases) out[name] = await runCase(answers, passes);
process.stdout.write(JSON.stringify(out));
"""

CASES: list[tuple[str, list[Any], int]] = [
    # Every answer lost for 9 tries (3 passes of 3 tries), then `running`.
    ("lost-then-running", ["lost"] * 9 + ["running"], 6),
    ("5xx-then-running", [503] * 4 + ["running"], 5),
    ("lost-then-cancelled", ["lost"] * 3 + ["cancelled"], 5),
    ("lost-then-404", ["lost"] * 3 + [404], 5),
    ("409", [409], 4),
    ("401-then-running", [401, "running"], 5),
]


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    if not NODES:
        pytest.skip(NO_NODE)
    run = subprocess.run(
        [NODES[0][1], "--input-type=module", "-e", SCRIPT, json.dumps(CASES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    data: dict[str, dict[str, Any]] = json.loads(run.stdout)
    return data


def _passes(record: dict[str, Any]) -> list[int]:
    return sorted({start["pass"] for start in record["starts"]})


@pytest.mark.parametrize("name", ["lost-then-running", "5xx-then-running"])
def test_a_start_never_answered_is_asked_again_each_pass_until_it_is(records, name) -> None:
    record = records[name]
    tries = 10 if name == "lost-then-running" else 5
    assert len(record["starts"]) == tries, record
    assert len(_passes(record)) == -(-tries // 3), record  # three tries a pass, in a row
    assert len({start["executionId"] for start in record["starts"]}) == 1, record
    assert record["runs"] == 1, record
    assert [body["status"] for body in record["completions"]] == ["completed"], record
    assert record["unanswered"] == 0, record


def test_a_start_answered_cancelled_at_last_is_not_run_and_posts_nothing(records) -> None:
    record = records["lost-then-cancelled"]
    assert len(record["starts"]) == 4 and len(_passes(record)) == 2, record
    assert record["runs"] == 0 and record["completions"] == [], record
    assert record["unanswered"] == 0, record


@pytest.mark.parametrize(("name", "tries"), [("lost-then-404", 4), ("409", 1)])
def test_a_start_refused_404_or_409_drops_the_command_with_a_line(records, name, tries) -> None:
    record = records[name]
    assert len(record["starts"]) == tries, record
    assert record["runs"] == 0 and record["completions"] == [], record
    assert record["unanswered"] == 0, record
    assert any("start-refused" in line and COMMAND_ID in line for line in record["lines"])


def test_a_start_refused_401_is_kept_and_asked_once_the_token_is_accepted(records) -> None:
    """R15: no retry in the refused pass; the next pass asks again and runs it."""
    record = records["401-then-running"]
    assert [start["pass"] for start in record["starts"]] == [1, 2], record
    assert record["runs"] == 1 and len(record["completions"]) == 1, record
