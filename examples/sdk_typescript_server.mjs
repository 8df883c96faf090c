// An osFoundry-style server on the official MCP TypeScript SDK, v2 line
// (@modelcontextprotocol/server 2.4.0: McpServer + createMcpHandler), on node:http.
//
// The SDK speaks MCP (2026-07-28 and the stateless legacy fallback, the envelope,
// input validation). The domain and the desktop's relay API are a domain service
// standing in for yours: here the kit's reference server (`osfoundry-fake serve`)
// at --domain, reached over HTTP with the caller's own token. This file shows the
// MCP side and departs from the SDK's defaults only where the rule book needs it,
// each departure marked with the rule it serves (docs/sdk-servers.md):
//
//   * an auth gate per tool (the SDK's entry verifies no token; D3 opens initialize,
//     ping, tools/list): 401/403 challenges naming resource_metadata and scope (R2);
//   * each tool's securitySchemes kept in the listing (D3).
// The Host and Origin guard in front is what the SDK's documentation asks for.
//
// Run: node examples/sdk_typescript_server.mjs --port N --domain http://127.0.0.1:M/mcp
// [--sdk-default NAME] (Node 22; the SDK from .peers/node_modules, or --peers DIR).
// Prints one JSON line: {"mcp_url": ..., "relay_url": ...} (the keys osfoundry-fake serve prints).

import http from 'node:http';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string' }, domain: { type: 'string' }, peers: { type: 'string' },
    // Keep one SDK default this server departs from (repeatable), to see what catches it.
    'sdk-default': { type: 'string', multiple: true, default: [] },
  },
});
const SDK_DEFAULTS = ['no-auth-gate', 'no-security-schemes'];
const restore = new Set(opts['sdk-default']);
for (const name of restore) {
  if (!SDK_DEFAULTS.includes(name)) {
    process.stderr.write(`unknown --sdk-default ${name}; known: ${SDK_DEFAULTS.join(', ')}\n`);
    process.exit(2);
  }
}
const require = createRequire(`${opts.peers ?? process.cwd() + '/.peers'}/node_modules/`);
const sdk = await import(require.resolve('@modelcontextprotocol/server'));
const { McpServer, createMcpHandler, fromJsonSchema, hostHeaderValidationResponse,
  originValidationResponse, localhostAllowedHostnames, localhostAllowedOrigins } = sdk;

const PORT = Number(opts.port);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const URL_ = `${ORIGIN}/mcp`;
const DOMAIN = opts.domain;
const DOMAIN_ORIGIN = new URL(DOMAIN).origin;
const METADATA = `${ORIGIN}/.well-known/oauth-protected-resource/mcp`; // RFC 9728 §3.1
const SCOPE = {
  run_graph_session: 'osfoundry:run', cancel_graph_run: 'osfoundry:run',
  list_graph_sessions: 'osfoundry:read', get_graph_run: 'osfoundry:read',
};
const MODERN = '2026-07-28';

// One modern JSON-RPC call to the domain service, as the caller (its token).
async function domainCall(method, params, token) {
  const headers = {
    'content-type': 'application/json', accept: 'application/json',
    'mcp-protocol-version': MODERN, 'mcp-method': method,
  };
  if (method === 'tools/call') headers['mcp-name'] = params.name;
  if (token) headers.authorization = `Bearer ${token}`;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } });
  const reply = await fetch(DOMAIN, { method: 'POST', headers, body });
  return { status: reply.status, message: reply.status === 200 ? await reply.json() : null };
}

const TOOLS = (await domainCall('tools/list', {})).message.result.tools;

// R2: which scopes a token holds, asked of the domain with a call that changes nothing.
const scopesOf = new Map();
async function scopes(token) {
  if (!token) return null;
  if (!scopesOf.has(token)) {
    const probe = { command_id: '00000000-0000-4000-8000-000000000000' };
    const read = await domainCall('tools/call', { name: 'get_graph_run', arguments: probe }, token);
    if (read.status === 401) return null; // not a token the domain knows (not cached)
    const run = await domainCall('tools/call', { name: 'cancel_graph_run', arguments: probe }, token);
    const held = [];
    if (read.status === 200) held.push('osfoundry:read');
    if (run.status === 200) held.push('osfoundry:run');
    scopesOf.set(token, held);
  }
  return scopesOf.get(token);
}

function factory() {
  const server = new McpServer({ name: 'osfoundry-sdk-example-ts', version: '0.1.0' });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, {
      description: tool.description,
      inputSchema: fromJsonSchema(tool.inputSchema),
      annotations: tool.annotations,
    }, async (args, ctx) => {
      const token = ctx?.http?.authInfo?.token ?? ctx?.authInfo?.token;
      const { message } = await domainCall('tools/call', { name: tool.name, arguments: args }, token);
      const result = message?.result;
      // R3: the domain's answer as it is (v2 would word a thrown Error the same: measured).
      return result ?? { content: [{ type: 'text', text: 'domain service unavailable' }], isError: true };
    });
  }
  return server;
}

const handler = createMcpHandler(factory);

function challenge(status, needed, sentToken) {
  const error = status === 403 ? 'insufficient_scope' : (sentToken ? 'invalid_token' : null);
  const params = [error && `error="${error}"`, `scope="${needed}"`, `resource_metadata="${METADATA}"`];
  return new Response(JSON.stringify({ error: error ?? 'unauthorized' }), {
    status, headers: { 'content-type': 'application/json', 'www-authenticate': `Bearer ${params.filter(Boolean).join(', ')}` },
  });
}

function bearer(request) {
  const value = request.headers.get('authorization') ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : null;
}

async function serveMcp(request) {
  const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames())
    ?? originValidationResponse(request, localhostAllowedOrigins());
  if (rejected) return rejected;
  const token = bearer(request);
  let parsed;
  if (request.method === 'POST') {
    const text = await request.clone().text();
    try { parsed = JSON.parse(text); } catch { parsed = undefined; }
    // R2 per tool (the SDK gates nothing itself): tools/call needs the tool's scope.
    const needed = parsed?.method === 'tools/call' ? SCOPE[parsed?.params?.name] : undefined;
    if (needed && !restore.has('no-auth-gate')) {
      const held = await scopes(token);
      if (held === null) return challenge(401, needed, request.headers.has('authorization'));
      if (!held.includes(needed)) return challenge(403, needed, true);
    }
  }
  const response = await handler.fetch(request, { authInfo: token ? { token, clientId: 'agent', scopes: [] } : undefined });
  const json = (response.headers.get('content-type') ?? '').includes('application/json');
  if (parsed?.method !== 'tools/list' || !json || restore.has('no-security-schemes')) {
    return response;
  }
  // D3: each tool lists its securitySchemes (the SDK's Tool drops the field).
  const message = await response.json();
  for (const tool of message?.result?.tools ?? []) {
    tool.securitySchemes = TOOLS.find((t) => t.name === tool.name)?.securitySchemes;
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(message), { status: response.status, headers });
}

async function serveOther(request) {
  const url = new URL(request.url);
  if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
    const doc = await (await fetch(`${DOMAIN_ORIGIN}/.well-known/oauth-protected-resource`)).json();
    return Response.json({ ...doc, resource: URL_, authorization_servers: [ORIGIN] });
  }
  // The relay API: plain HTTP, not MCP, served by the domain service.
  const init = { method: request.method, headers: request.headers };
  if (!['GET', 'HEAD'].includes(request.method)) init.body = await request.arrayBuffer();
  const upstream = await fetch(`${DOMAIN_ORIGIN}${url.pathname}${url.search}`, init);
  const headers = new Headers(upstream.headers);
  headers.delete('content-encoding');
  headers.delete('content-length');
  return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers });
}

// node:http <-> web Request/Response (what @modelcontextprotocol/node's toNodeHandler does).
http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const request = new Request(`${ORIGIN}${req.url}`, {
      method: req.method, headers, body: ['GET', 'HEAD'].includes(req.method) ? undefined : body,
    });
    const path = new URL(request.url).pathname.replace(/\/$/, '');
    const response = path === '/mcp' ? await serveMcp(request) : await serveOther(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'internal error' }));
    console.error(err);
  }
}).listen(PORT, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ mcp_url: URL_, relay_url: ORIGIN }) + '\n');
});
