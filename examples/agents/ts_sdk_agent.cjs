// An agent on the official MCP TypeScript SDK (@modelcontextprotocol/sdk) that follows
// the agent contract of docs/agent-conformance.md, in plain Node (20+, no build step):
//   pytest --osf-agent-command="node examples/agents/ts_sdk_agent.cjs"
// (the SDK installed where Node finds it: a node_modules folder above, or NODE_PATH).
// It reads the task from OSF_AGENT_*, does it with the SDK's Client over
// StreamableHTTPClientTransport, and writes its report. What the SDK does not do by
// itself, and this file adds:
// * one fresh random key per intended run, saved in OSF_AGENT_STATE_DIR before the
//   start, the command id saved once the ticket arrives; a restart of the same task
//   resumes from them (a finished task leaves nothing);
// * a lost reply (fetch failed, HTTP 502/503/504, no answer within three intervals) or
//   a session the server ended (404): a new session, and the same call again (a start:
//   the same key and arguments);
// * the first read one interval (poll_after_seconds) after the ticket, then one every
//   interval, none after a terminal answer; run-and-cancel: one cancel
//   cancel_after_seconds after the ticket, then reads until the run is terminal;
// * a tool error (D5, an unknown session), 401 and 403 final: reported, exit 1.
// --plain leaves out the retry and the saved state (the SDK's defaults: 60 s per
// request, an error ends the agent), keeping the cadence. Exit 0: every run terminal
// and reported; 1: a failure; 3: the deadline; 128 + n: signal n.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { McpError, ErrorCode } = require("@modelcontextprotocol/sdk/types.js");

const TERMINAL = ["completed", "failed", "cancelled"];
const LOST_STATUSES = [404, 502, 503, 504]; // 404: the server ended the MCP session
const env = process.env;
const plain = process.argv.includes("--plain");
const task = JSON.parse(env.OSF_AGENT_TASK);
const interval = Number(env.OSF_AGENT_PICKUP_INTERVAL);
const statePath = path.join(env.OSF_AGENT_STATE_DIR, "runs.json");
const sleep = (seconds) => new Promise((done) => setTimeout(done, Math.max(0, seconds * 1000)));

class Final extends Error {} // a refusal or an error that asking again cannot fix

function isLost(err) {
  if (err instanceof StreamableHTTPError) return LOST_STATUSES.includes(err.code);
  if (err instanceof McpError) return err.code === ErrorCode.RequestTimeout;
  // undici's fetch: "fetch failed" (no answer) or "terminated" (cut off mid-answer)
  return err instanceof TypeError && ["fetch failed", "terminated"].includes(err.message);
}

// ------------------------------------------------------------------ saved state
function load() {
  try {
    const saved = JSON.parse(fs.readFileSync(statePath, "utf8"));
    return JSON.stringify(saved.task) === JSON.stringify(task) ? saved.runs : [];
  } catch {
    return []; // none: a fresh start
  }
}
const runs = plain ? [] : load();

function save() {
  if (plain) return;
  const kept = runs.map(({ view, ...run }) => run);
  fs.writeFileSync(statePath + ".part", JSON.stringify({ task, runs: kept }));
  fs.renameSync(statePath + ".part", statePath);
}

// ------------------------------------------------------------------ the wire
let client = null;

async function tool(name, args) {
  for (;;) {
    try {
      if (client === null) {
        const transport = new StreamableHTTPClientTransport(new URL(env.OSF_AGENT_MCP_URL), {
          requestInit: { headers: { authorization: `Bearer ${env.OSF_AGENT_TOKEN}` } },
        });
        client = new Client({ name: "osf-example-ts-agent", version: "1.0.0" });
        await client.connect(transport);
      }
      const options = plain ? undefined : { timeout: 3 * interval * 1000 };
      const result = await client.callTool({ name, arguments: args }, undefined, options);
      if (result.isError) {
        throw new Final(`${name}: ${result.content.map((c) => c.text).join(" ")}`);
      }
      return result.structuredContent;
    } catch (err) {
      if (plain || !isLost(err)) throw err;
      const old = client; // a lost reply: a new session, then the same call again
      client = null;
      await old?.close().catch(() => undefined);
      await sleep(Math.min(1, interval / 4));
    }
  }
}

// ------------------------------------------------------------------ the task
async function follow(run) {
  if (run.command_id === undefined) {
    const ticket = await tool("run_graph_session", {
      graph_session_id: run.graph_session_id,
      idempotency_key: run.key,
      arguments: run.arguments,
    });
    Object.assign(run, {
      command_id: ticket.command_id,
      status: ticket.status,
      ticket_at: Date.now() / 1000,
      every: Number(ticket.poll_after_seconds || interval),
    });
    save();
  }
  const every = Number(run.every || interval);
  run.next_read ??= run.ticket_at + every;
  const cancel = Number(task.cancel_after_seconds || 0);
  while (run.view === undefined || !TERMINAL.includes(run.status)) {
    const cancelAt =
      task.kind === "run-and-cancel" && !run.cancel_sent ? run.ticket_at + cancel : Infinity;
    await sleep(Math.min(run.next_read, cancelAt) - Date.now() / 1000);
    if (cancelAt <= run.next_read) {
      await tool("cancel_graph_run", { command_id: run.command_id });
      run.cancel_sent = true;
      save();
      continue;
    }
    run.view = await tool("get_graph_run", { command_id: run.command_id });
    run.status = run.view.status;
    run.next_read = Date.now() / 1000 + every;
  }
}

async function doTask() {
  let graphSessionId = task.graph_session_id;
  if (runs.length === 0 && task.kind === "run-by-name") {
    const listing = await tool("list_graph_sessions", {
      project_id: env.OSF_AGENT_PROJECT_ID,
      limit: 50,
    });
    const named = listing.sessions.find((s) => s.name === task.session_name);
    if (!named) throw new Final(`no shared Graph session is named ${JSON.stringify(task.session_name)}`);
    graphSessionId = named.graph_session_id;
  }
  const items = task.kind === "run-items" ? task.items : [task.arguments || {}];
  for (const [index, args] of items.entries()) {
    if (index === runs.length) {
      const key = crypto.randomBytes(16).toString("hex"); // one fresh key per intended run
      runs.push({ graph_session_id: graphSessionId, arguments: args, key });
      save();
    }
    await follow(runs[index]);
  }
}

// ------------------------------------------------------------------ the report
function entry(run, error) {
  const view = run.view || {};
  const truncated = Boolean(view.result_truncated);
  const done = TERMINAL.includes(run.status) && run.view !== undefined;
  return {
    command_id: run.command_id ?? null,
    status: run.status ?? null,
    result: truncated ? null : view.result ?? null,
    result_truncated: truncated,
    error: done ? view.error ?? null : error ?? view.error ?? null,
  };
}

function finish(code, error) {
  const entries = runs.map((run) => entry(run, error));
  if (entries.length === 0) entries.push(entry({}, error)); // no run was started
  const report = task.kind === "run-items" ? entries : entries[entries.length - 1];
  fs.writeFileSync(env.OSF_AGENT_REPORT + ".part", JSON.stringify(report));
  fs.renameSync(env.OSF_AGENT_REPORT + ".part", env.OSF_AGENT_REPORT);
  if (code <= 1) fs.rmSync(statePath, { force: true }); // done or final: nothing to resume
  process.exit(code);
}

for (const [signal, number] of [["SIGTERM", 15], ["SIGINT", 2]]) {
  process.on(signal, () => finish(128 + number, `stopped by signal ${number}`));
}
setTimeout(
  () => finish(3, "the deadline passed before every run was terminal"),
  (Number(env.OSF_AGENT_DEADLINE) - 0.5 - process.uptime()) * 1000, // from the start
);
doTask().then(
  () => finish(0, null),
  (err) => finish(1, err instanceof Final ? err.message : `${err.name}: ${err.message}`),
);
