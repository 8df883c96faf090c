// An agent on the official MCP TypeScript SDK, driving `osfoundry-fake serve --relay
// --virtual-clock`: queue a run with a key, wait one pickup interval (20 s), then poll
// every 10 s until it ends. Instead of sleeping it tells the server's clock to move
// (POST /_osf/clock/advance), so a one-minute Graph takes milliseconds. Run by
// examples/test_example_ts_agent.py with Node 22 (types stripped, no build step):
//   MCP_URL=... AGENT_TOKEN=... ADMIN_URL=... ADMIN_TOKEN=... GRAPH_SESSION_ID=... \
//   node examples/sdk_agent.cts
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

// Where a real agent would sleep, a test on virtual time moves the server's clock.
async function wait(seconds: number): Promise<void> {
  const reply = await fetch(env("ADMIN_URL") + "/advance", {
    method: "POST",
    headers: { authorization: `Bearer ${env("ADMIN_TOKEN")}`, "content-type": "application/json" },
    body: JSON.stringify({ seconds }),
  });
  if (!reply.ok) throw new Error(`advance: HTTP ${reply.status} ${await reply.text()}`);
}

// Set the world's faults on the server, as the osf marker would (admin token only).
async function setFaults(faults: string): Promise<void> {
  const reply = await fetch(env("FAULTS_URL"), {
    method: "POST",
    headers: { authorization: `Bearer ${env("ADMIN_TOKEN")}`, "content-type": "application/json" },
    body: faults,
  });
  if (!reply.ok) throw new Error(`faults: HTTP ${reply.status} ${await reply.text()}`);
}

async function connect(): Promise<any> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
      requestInit: { headers: { authorization: `Bearer ${env("AGENT_TOKEN")}` } },
    });
    const client = new Client({ name: "ts-example-agent", version: "1.0.0" });
    try {
      await client.connect(transport);
      return client;
    } catch {
      await client.close().catch(() => undefined); // a reply lost while connecting
    }
  }
  throw new Error("no connection in 20 tries");
}

async function main(): Promise<void> {
  if (process.env.FAULTS) await setFaults(process.env.FAULTS);
  const client = await connect();
  let lost = 0;
  const call = async (name: string, args: Record<string, unknown>): Promise<any> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      let result;
      try {
        result = await client.callTool({ name, arguments: args });
      } catch {
        lost += 1; // the reply was lost: ask again, the same way
        continue;
      }
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent;
    }
    throw new Error(`${name}: no reply in 20 tries`);
  };
  const ticket = await call("run_graph_session", {
    graph_session_id: env("GRAPH_SESSION_ID"),
    idempotency_key: process.env.KEY || "ts-example-key-0001",
  });
  await wait(20);
  let polls = 0;
  for (;;) {
    polls += 1;
    const run = await call("get_graph_run", { command_id: ticket.command_id });
    if (["completed", "failed", "cancelled"].includes(run.status)) {
      process.stdout.write(JSON.stringify({ run, polls, lost }) + "\n");
      break;
    }
    await wait(10);
  }
  await client.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`ts agent failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
