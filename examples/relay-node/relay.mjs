// A desktop relay for osFoundry Connected Graph runs, in plain Node (20 or newer, no
// dependencies): a port of the desktop app's useConnectedGraphRelay.ts hook.
//
// It knows nothing of any test kit. What it needs from its host comes through three
// seams, given to the constructor (adapter.mjs wires them for the conformance kit;
// your desktop app wires them to its own settings and Graph engine):
//
//   timing   `interval` (seconds between passes, 20) and `controlPoll` (seconds between
//            control polls of a running command, 3);
//   sharing  `sharing.read()` -> Promise of [{project_id, enabled, sessions: [ticked
//            sessions {graph_session_id, name, description, slug, version, status}]}],
//            read at the start of each pass and again just before each run; and
//            optionally `sharing.watch(onChange)`, which calls onChange() whenever the
//            owner changes sharing (a pass then runs at once);
//   engine   `engine.start({commandId, channel, graphSessionId, arguments})` -> Promise
//            of a run {done: Promise of {status: "completed" | "failed" | "cancelled",
//            result, error, totalTokens, reportedCost}, cancel(): Promise}.
//
// The rules it follows (osFoundry's D11-D18):
//   D11 a pass every `interval` and at once when sharing changes (the interval then
//       restarts); a tick that comes while a pass is busy is skipped.
//   D12 a pass first re-sends the outbox, then syncs each enabled project's ticked
//       sessions (at most 100) and handles the queued commands of the answer, one
//       project after another.
//   D13 just before running a command it reads sharing again: project still enabled,
//       session still ticked, slug unchanged; if not, it completes the command
//       `cancelled` with NO_LONGER_SHARED and never starts or runs it.
//   D14 start, then the Graph on channel `graph:external:<command id>` with a control
//       poll every `controlPoll` while it runs (none after), then the completion.
//       One command at a time.
//   D15 a command id that is not a UUID is refused before anything is sent or run.
//   D16 when a control poll sees cancel_requested it calls the run's cancel() once,
//       waits for the run to end and reports `cancelled`, whatever the Graph did.
//   D17 every completion is written to the outbox before it is posted and removed only
//       after a 2xx answer; a command whose completion waits there is never run again.
//   D18 completions are bounded by boundedCompletion (bounded.mjs).
//   R14 a start with no answer (none, a time-out, a 5xx, a body that is not the API's)
//       is sent again, same execution id, up to START_ATTEMPTS times in a row; when
//       none is answered the command is kept and, on every following pass right after
//       the outbox, re-checked (D13) and started again the same way until an answer
//       comes (a 401/403 keeps it too, R15). `running`: it runs once; `cancelled`: not
//       run, nothing posted; any other refusal (404, 409, 400): dropped, logged.
//   R15 a 401 or 403 (the desktop token refused) ends the pass there: nothing more is
//       sent until the next pass (at most one sync a pass), the outbox is kept, and a
//       `token-refused` line says so.
// Faults (5xx, time-outs, refused connections, a sharing source that fails) are
// logged and never end the relay or move its cadence; when sharing cannot be read at
// the start of a pass, the pass syncs the settings it last read.

import { randomUUID } from 'node:crypto';
import { boundedCompletion } from './bounded.mjs';
import { HttpError } from './relay-api.mjs';

export { boundedCompletion, cutError, ERROR_LIMIT, RESULT_LIMIT } from './bounded.mjs';
export { FileOutbox } from './outbox.mjs';
export { HttpError, ProtocolError, RelayApi, RequestError } from './relay-api.mjs';

/** Production seconds between passes. */
export const RELAY_INTERVAL_SECONDS = 20;
/** Production seconds between control polls of a running command. */
export const CONTROL_POLL_SECONDS = 3;
/** The most sessions one sync carries. */
export const MAX_SYNC_SESSIONS = 100;
/** The error of a command refused by the re-check before run (D13). */
export const NO_LONGER_SHARED = 'Graph session is no longer shared with this project';
/** How many times in a row a pass sends a start whose answer is lost (the server may have
 * applied it); unanswered, it is asked again the same way on every following pass. */
export const START_ATTEMPTS = 3;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SESSION_FIELDS = ['graph_session_id', 'name', 'description', 'slug', 'version', 'status'];

/** True when `value` is a UUID in its canonical 8-4-4-4-12 hex form. */
export function isUuid(value) {
  return typeof value === 'string' && UUID.test(value);
}

/** The six fields a sync carries for a session, in the API's order. */
export function syncedSession(session) {
  return Object.fromEntries(SESSION_FIELDS.map((key) => [key, session[key]]));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The desktop relay. `start()` begins polling; `stop()` ends it. */
export class Relay {
  /**
   * `api`: a RelayApi. `sharing`, `engine`: the seams described at the top of this file.
   * `outbox`: a FileOutbox (or any object with put/remove/has/items). `interval`,
   * `controlPoll`: seconds (positive numbers). `log(line)`: where log lines go.
   * `newExecutionId()`: the execution id of a run (default "exec_" + 32 hex digits).
   */
  constructor({
    api,
    sharing,
    engine,
    outbox,
    interval = RELAY_INTERVAL_SECONDS,
    controlPoll = CONTROL_POLL_SECONDS,
    log = (line) => process.stderr.write(`${line}\n`),
    newExecutionId = () => `exec_${randomUUID().replaceAll('-', '')}`,
  }) {
    for (const [name, value] of Object.entries({ interval, controlPoll })) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw new TypeError(`${name} must be a positive number of seconds, got ${String(value)}`);
      }
    }
    if (typeof sharing?.read !== 'function') throw new TypeError('sharing.read() is missing');
    if (typeof engine?.start !== 'function') throw new TypeError('engine.start() is missing');
    this.api = api;
    this.sharing = sharing;
    this.engine = engine;
    this.outbox = outbox;
    this.intervalMs = interval * 1000;
    this.controlPollMs = controlPoll * 1000;
    this.logLine = log;
    this.newExecutionId = newExecutionId;
    this.busy = false;
    this.running = false;
    this.timer = undefined;
    this.nextAt = 0;
    this.stopWatching = undefined;
    this.lastProjects = undefined;
    this.refused = false;
    /** R14: command id -> {projectId, command, executionId} of starts with no answer yet. */
    this.unanswered = new Map();
  }

  log(kind, commandId, detail = '') {
    this.logLine(`${new Date().toISOString()} ${kind} ${commandId ?? '-'} ${detail}`.trimEnd());
  }

  /** Begin: a pass at once, then one every interval, and one whenever sharing changes. */
  start() {
    if (this.running) throw new Error('the relay is already started');
    this.running = true;
    this.#tick('start', true);
    if (typeof this.sharing.watch === 'function') {
      this.stopWatching = this.sharing.watch(() => this.sharingChanged());
    }
  }

  /** Stop polling. A command under way finishes; its completion is in the outbox first. */
  stop() {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (typeof this.stopWatching === 'function') this.stopWatching();
  }

  /** Sharing changed: a pass at once (skipped if one is busy), and the interval restarts. */
  sharingChanged() {
    if (this.running) this.#tick('sharing', true);
  }

  #schedule(restart) {
    // Passes keep to a fixed grid, so the time a pass takes does not move the next one.
    const now = Date.now();
    this.nextAt = restart ? now + this.intervalMs : this.nextAt + this.intervalMs;
    if (this.nextAt <= now) this.nextAt = now + this.intervalMs;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.#tick('interval', false), this.nextAt - now);
  }

  #tick(reason, restart) {
    if (!this.running) return;
    this.#schedule(restart);
    if (this.busy) {
      this.log('pass-skipped', null, `${reason}: the previous pass is still busy`);
      return;
    }
    this.busy = true;
    this.#pass(reason)
      .catch((err) => this.log('pass-error', null, describe(err)))
      .finally(() => {
        this.busy = false;
      });
  }

  /** R15: true when `err` is the desktop token refused; the pass then sends nothing more. */
  #tokenRefused(err) {
    if (!(err instanceof HttpError) || (err.status !== 401 && err.status !== 403)) return false;
    if (!this.refused) {
      this.refused = true;
      this.log('token-refused', null, `HTTP ${err.status}: nothing more is sent this pass; the outbox is kept`);
    }
    return true;
  }

  async #pass(reason) {
    this.log('pass', null, reason);
    this.refused = false;
    await this.#flushOutbox();
    for (const { projectId, command } of [...this.unanswered.values()]) {
      if (!this.running || this.refused) return;
      try {
        await this.#handle(projectId, command);
      } catch (err) {
        this.log('command-error', command.command_id, describe(err));
      }
    }
    if (this.refused) return;
    let projects;
    try {
      projects = await this.sharing.read();
      this.lastProjects = projects;
    } catch (err) {
      // The syncs go on with the settings last read (the re-check before a run will
      // still refuse to run anything it cannot confirm).
      projects = this.lastProjects;
      const fallback = projects === undefined ? 'no settings read yet: no sync' : 'syncing the settings last read';
      this.log('sharing-unavailable', null, `${describe(err)}; ${fallback}`);
      if (projects === undefined) return;
    }
    for (const project of projects) {
      if (!this.running || this.refused) return;
      if (!project.enabled) continue;
      const sessions = project.sessions.slice(0, MAX_SYNC_SESSIONS).map(syncedSession);
      let commands;
      try {
        commands = await this.api.sync(project.project_id, sessions);
      } catch (err) {
        this.log('sync-failed', null, `${project.project_id}: ${describe(err)}`);
        this.#tokenRefused(err);
        continue;
      }
      this.log('synced', null, `${project.project_id}: ${commands.length} queued`);
      for (const command of commands) {
        if (!this.running || this.refused) return;
        if (this.unanswered.has(command?.command_id)) {
          this.log('skipped', command.command_id, 'its start was asked again this pass');
          continue;
        }
        try {
          await this.#handle(project.project_id, command);
        } catch (err) {
          this.log('command-error', command?.command_id, describe(err));
        }
      }
    }
  }

  async #handle(projectId, command) {
    const commandId = command?.command_id;
    if (!isUuid(commandId)) {
      this.log('refused', null, `command id ${JSON.stringify(commandId)} is not a UUID`);
      return;
    }
    if (this.outbox.has(commandId)) {
      this.log('skipped', commandId, 'its completion waits in the outbox');
      return;
    }
    const executionId = this.unanswered.get(commandId)?.executionId ?? this.newExecutionId();
    let shared;
    try {
      shared = await this.#stillShared(projectId, command);
    } catch (err) {
      // Consent cannot be confirmed: neither run nor cancel; the next sync brings it again.
      this.log('recheck-unavailable', commandId, describe(err));
      return;
    }
    if (!shared) {
      this.unanswered.delete(commandId);
      this.log('recheck-cancelled', commandId, NO_LONGER_SHARED);
      await this.#complete(commandId, { executionId, status: 'cancelled', error: NO_LONGER_SHARED });
      return;
    }
    const status = await this.#start(projectId, command, executionId);
    if (status === undefined) return;
    if (status !== 'running') {
      this.log('not-started', commandId, `the server answered ${JSON.stringify(status)}`);
      return;
    }
    const channel = `graph:external:${commandId}`;
    let run;
    try {
      run = await this.engine.start({
        commandId,
        channel,
        graphSessionId: command.graph_session_id,
        arguments: isPlainObject(command.arguments) ? command.arguments : {},
      });
    } catch (err) {
      // Never leave the run `running` on the server for ever: report why it did not run.
      const error = `the desktop could not start the Graph: ${describe(err)}`;
      this.log('engine-refused', commandId, error);
      await this.#complete(commandId, { executionId, status: 'failed', error });
      return;
    }
    this.log('started', commandId, channel);
    const cancelled = await this.#watchRun(commandId, run);
    const outcome = await settle(run.done);
    await this.#complete(commandId, completionOf(executionId, outcome, cancelled));
  }

  async #stillShared(projectId, command) {
    const projects = await this.sharing.read();
    const project = projects.find((p) => p.project_id === projectId);
    if (!project?.enabled) return false;
    const session = project.sessions.find((s) => s.graph_session_id === command.graph_session_id);
    return session !== undefined && session.slug === command.slug;
  }

  /** The start's answer (a status), or undefined: refused (dropped) or kept to ask again. */
  async #start(projectId, command, executionId) {
    // A lost answer may hide a start the server applied (it then answers `running`
    // again, and no sync hands the command out any more), so it is asked again, with
    // the same execution id: a few times now, then on every following pass (R14).
    const commandId = command.command_id;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const status = await this.api.start(commandId, executionId);
        this.unanswered.delete(commandId);
        return status;
      } catch (err) {
        if (err instanceof HttpError && err.status < 500 && !this.#tokenRefused(err)) {
          this.unanswered.delete(commandId);
          this.log('start-refused', commandId, `${describe(err)}; the command is dropped`);
          return undefined;
        }
        if (attempt === START_ATTEMPTS || this.refused) {
          this.unanswered.set(commandId, { projectId, command, executionId });
          this.log('start-unanswered', commandId, `${describe(err)}; asked again next pass`);
          return undefined;
        }
        this.log('start-unanswered', commandId, `${describe(err)}; sending it again`);
        await sleep(Math.min(this.controlPollMs, 1000));
      }
    }
  }

  /** Control polls until the run ends; true when a cancel was asked (and sent once). */
  async #watchRun(commandId, run) {
    let ended = false;
    const done = Promise.resolve(run.done).then(
      () => { ended = true; },
      () => { ended = true; },
    );
    let next = Date.now() + this.controlPollMs;
    for (;;) {
      if (await endsWithin(done, next - Date.now())) return false;
      let control;
      try {
        control = await this.api.control(commandId);
      } catch (err) {
        this.log('control-failed', commandId, describe(err));
        this.#tokenRefused(err);
      }
      if (control?.cancel_requested === true) {
        this.log('cancel', commandId, ended ? 'the Graph had already ended' : 'stopping the Graph');
        try {
          await run.cancel();
        } catch (err) {
          this.log('cancel-failed', commandId, describe(err));
        }
        return true;
      }
      if (ended) return false;
      next = Math.max(next + this.controlPollMs, Date.now());
    }
  }

  async #complete(commandId, fields) {
    let body;
    try {
      body = boundedCompletion(fields);
    } catch (err) {
      body = boundedCompletion({ ...fields, status: 'failed', result: null, error: describe(err) });
    }
    try {
      this.outbox.put(commandId, body);
    } catch (err) {
      this.log('outbox-write-failed', commandId, describe(err));
    }
    this.log('finished', commandId, body.status);
    await this.#post(commandId, body);
  }

  async #flushOutbox() {
    for (const [commandId, body] of this.outbox.items()) {
      if (!this.running || this.refused) return;
      await this.#post(commandId, body);
    }
  }

  async #post(commandId, body) {
    try {
      await this.api.complete(commandId, body);
    } catch (err) {
      this.log('complete-failed', commandId, `${describe(err)}; kept in the outbox`);
      this.#tokenRefused(err);
      return;
    }
    try {
      this.outbox.remove(commandId);
    } catch (err) {
      this.log('outbox-write-failed', commandId, describe(err));
    }
    this.log('delivered', commandId, body.status);
  }
}

/** The completion fields for a run's outcome; `cancelled` wins when a cancel was sent. */
function completionOf(executionId, outcome, cancelled) {
  const figures = { totalTokens: outcome.totalTokens, reportedCost: outcome.reportedCost };
  if (cancelled || outcome.status === 'cancelled') {
    return { executionId, status: 'cancelled', ...figures };
  }
  if (outcome.status === 'completed') {
    return { executionId, status: 'completed', result: outcome.result ?? null, ...figures };
  }
  if (outcome.status === 'failed') {
    return { executionId, status: 'failed', error: String(outcome.error ?? 'the Graph failed'), ...figures };
  }
  const error = `the Graph engine reported an unknown status ${JSON.stringify(outcome.status)}`;
  return { executionId, status: 'failed', error, ...figures };
}

/** The run's outcome; an engine that rejects becomes a `failed` outcome naming why. */
async function settle(done) {
  try {
    const outcome = await done;
    if (outcome !== null && typeof outcome === 'object') return outcome;
    return { status: 'failed', error: `the Graph engine ended with ${JSON.stringify(outcome)}` };
  } catch (err) {
    return { status: 'failed', error: `the Graph engine failed: ${describe(err)}` };
  }
}

/** True when `done` settles within `ms` milliseconds (false: the time ran out first). */
function endsWithin(done, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  return Promise.race([done.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describe(err) {
  return err instanceof Error ? err.message : String(err);
}
