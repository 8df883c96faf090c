// The relay's outbox (osFoundry rule D17): completions persisted before they are posted.
//
// A completion is written here before its POST and removed only after a 2xx answer,
// so a POST lost to a crash, a kill or a network fault is delivered by the next pass.
// FileOutbox keeps the entries in one JSON file, rewritten atomically on every change
// (a temporary file in the same folder, fsync, rename, fsync of the folder): a reader,
// or the relay restarted after a SIGKILL, sees the old content or the new, never a
// torn file. Writes are synchronous, so no signal handler can run in the middle of one.

import fs from 'node:fs';
import path from 'node:path';

let saves = 0; // makes each temporary file's name unique within the process

/**
 * An outbox in `filePath` ({"version": 1, "entries": [[command_id, body], ...]}, oldest
 * first). The folder must exist. A file that is not an outbox throws an Error naming
 * the file and what is wrong with it (it is never overwritten silently).
 */
export class FileOutbox {
  constructor(filePath) {
    if (typeof filePath !== 'string' || filePath === '') {
      throw new TypeError('the outbox needs a file path');
    }
    this.path = filePath;
    const folder = path.dirname(filePath);
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
      throw new Error(`outbox folder ${folder} does not exist`);
    }
    /** @type {Map<string, object>} */
    this.entries = fs.existsSync(filePath) ? load(filePath) : new Map();
  }

  /** Store (or replace) the completion for `commandId`, durably, before returning. */
  put(commandId, body) {
    const next = new Map([...this.entries].filter(([id]) => id !== commandId));
    next.set(commandId, body);
    this.#save(next);
  }

  /** Forget the completion for `commandId` (after a 2xx answer). */
  remove(commandId) {
    if (!this.entries.has(commandId)) return;
    const next = new Map([...this.entries].filter(([id]) => id !== commandId));
    this.#save(next);
  }

  /** True when a completion for `commandId` waits here. */
  has(commandId) {
    return this.entries.has(commandId);
  }

  /** Every waiting completion as [commandId, body], oldest first (a copy). */
  items() {
    return [...this.entries];
  }

  get size() {
    return this.entries.size;
  }

  #save(next) {
    const payload = JSON.stringify({ version: 1, entries: [...next] });
    const folder = path.dirname(this.path);
    const tmp = path.join(folder, `.outbox-${process.pid}-${(saves += 1)}.tmp`);
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeFileSync(fd, payload, 'utf8');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.renameSync(tmp, this.path);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    syncFolder(folder);
    this.entries = next;
  }
}

function syncFolder(folder) {
  // Makes the rename itself durable; some file systems refuse fsync on a folder.
  let fd;
  try {
    fd = fs.openSync(folder, 'r');
    fs.fsyncSync(fd);
  } catch {
    // best effort: the file's own content is already on disk
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function load(filePath) {
  const problem = (what) => new Error(`${filePath} is not an outbox file: ${what}`);
  let data;
  try {
    const text = fs.readFileSync(filePath, 'utf8');
    data = JSON.parse(text === '' ? '{"entries": []}' : text);
  } catch (err) {
    throw problem(err.message);
  }
  if (data === null || typeof data !== 'object' || !Array.isArray(data.entries)) {
    throw problem('no "entries" list');
  }
  const entries = new Map();
  for (const entry of data.entries) {
    const ok = Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string'
      && entry[1] !== null && typeof entry[1] === 'object' && !Array.isArray(entry[1]);
    if (!ok) throw problem(`an entry is not [command_id, body]: ${JSON.stringify(entry)}`);
    entries.set(entry[0], entry[1]);
  }
  return entries;
}
