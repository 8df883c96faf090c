// The adapter: runs relay.mjs under the pytest-osfoundry relay suite.
//
//   pytest --osf-relay-command="node examples/relay-node/adapter.mjs"
//
// This is the only file that knows the kit. It reads the driver contract's environment
// and wires the relay's three seams to it; the relay itself is unchanged:
//
//   timing   OSF_RELAY_INTERVAL / OSF_RELAY_CONTROL_POLL (seconds; 20 and 3 without them)
//   sharing  GET {OSF_RELAY_DRIVER}/sharing, read whenever the relay consults sharing,
//            and a watcher long-polling GET {driver}/sharing?after=<revision> that
//            tells the relay at once when the revision moves
//   engine   a fake Graph engine: POST {driver}/runs says how long the run takes and
//            how it ends; POST {driver}/runs/{command_id}/cancel says how long it
//            takes to stop
//
// plus the relay API (OSF_RELAY_URL, OSF_DESKTOP_TOKEN) and the outbox file in
// OSF_RELAY_STATE_DIR. OSF_RELAY_SCENARIO only names the check in the log. A missing
// or malformed variable prints one "ERROR: ..." line and exits 2. SIGTERM or SIGINT
// ends the process at once: the outbox is written synchronously, so it is intact.

import path from 'node:path';
import {
  CONTROL_POLL_SECONDS,
  FileOutbox,
  Relay,
  RelayApi,
  RELAY_INTERVAL_SECONDS,
} from './relay.mjs';
import { driverEngine, driverSharing } from './driver.mjs';

function fail(message) {
  process.stderr.write(`ERROR: ${message}\n`);
  process.exit(2);
}

function required(name) {
  const value = process.env[name];
  if (value === undefined || value === '') fail(`${name} is not set`);
  return value;
}

function seconds(name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    fail(`${name} must be a positive number of seconds, got ${JSON.stringify(text)}`);
  }
  return value;
}

function httpUrl(name) {
  const value = required(name);
  if (!/^https?:\/\/[^/]/.test(value)) fail(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, '');
}

function main() {
  const relayUrl = httpUrl('OSF_RELAY_URL');
  const token = required('OSF_DESKTOP_TOKEN');
  const driverUrl = httpUrl('OSF_RELAY_DRIVER');
  const stateDir = required('OSF_RELAY_STATE_DIR');
  const interval = seconds('OSF_RELAY_INTERVAL', RELAY_INTERVAL_SECONDS);
  const controlPoll = seconds('OSF_RELAY_CONTROL_POLL', CONTROL_POLL_SECONDS);
  const scenario = process.env.OSF_RELAY_SCENARIO || '-';

  // Never a token in the log, whatever a message quotes.
  const log = (line) => process.stderr.write(`[${scenario}] ${line.split(token).join('***')}\n`);
  let outbox;
  try {
    outbox = new FileOutbox(path.join(stateDir, 'outbox.json'));
  } catch (err) {
    fail(err.message);
  }
  // Every request has a time-out: a few intervals, within 2-10 s.
  const timeoutSeconds = Math.min(10, Math.max(2, 2 * interval));
  const stopping = new AbortController();
  const api = new RelayApi({ baseUrl: relayUrl, token, timeoutSeconds, stopSignal: stopping.signal });
  const driver = { url: driverUrl, timeoutMs: timeoutSeconds * 1000, stopSignal: stopping.signal, log };
  const relay = new Relay({
    api,
    outbox,
    interval,
    controlPoll,
    log,
    sharing: driverSharing(driver),
    engine: driverEngine(driver),
  });

  const stop = (signal) => {
    relay.stop();
    stopping.abort();
    log(`stopping on ${signal}: ${outbox.size} completion(s) wait in the outbox`);
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  log(`relay started: interval ${interval} s, control poll ${controlPoll} s, ${outbox.size} completion(s) in the outbox`);
  relay.start();
}

main();
