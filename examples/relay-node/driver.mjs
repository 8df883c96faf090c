// The adapter's half that talks to the kit's driver API: sharing settings and a fake
// Graph engine that asks the driver what each run does. Kit-specific, like adapter.mjs.
//
//   GET  {driver}/sharing           -> {revision, projects: [{project_id, enabled,
//                                       sessions: [{graph_session_id, name, description,
//                                       slug, version, status, ticked}]}]}
//   GET  {driver}/sharing?after=n   -> the same, as soon as the revision is past n
//                                      (or after 10 s with the same revision)
//   POST {driver}/runs              {command_id, channel, graph_session_id, arguments}
//                                   -> {duration, status, result, error, total_tokens,
//                                       reported_cost}
//   POST {driver}/runs/{id}/cancel  -> {stop_after}
//
// An answer that is not of this shape throws an Error naming the field that is wrong.

import { requestJson } from './relay-api.mjs';

const LONG_POLL_MS = 15_000; // the driver answers within 10 s
const WATCH_RETRY_MS = 1_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function check(condition, what) {
  if (!condition) throw new Error(`the driver's answer is malformed: ${what}`);
}

/** The relay's view of a /sharing answer: [{project_id, enabled, sessions: ticked ones}]. */
export function projectsOf(answer) {
  check(Number.isInteger(answer.revision), '"revision" is not an integer');
  check(Array.isArray(answer.projects), '"projects" is not a list');
  return answer.projects.map((project, i) => {
    check(project !== null && typeof project === 'object', `projects[${i}] is not an object`);
    check(typeof project.project_id === 'string', `projects[${i}].project_id is not a string`);
    check(typeof project.enabled === 'boolean', `projects[${i}].enabled is not a boolean`);
    check(Array.isArray(project.sessions), `projects[${i}].sessions is not a list`);
    const sessions = project.sessions.map((session, j) => {
      const where = `projects[${i}].sessions[${j}]`;
      check(session !== null && typeof session === 'object', `${where} is not an object`);
      check(typeof session.graph_session_id === 'string', `${where}.graph_session_id is not a string`);
      check(typeof session.slug === 'string', `${where}.slug is not a string`);
      check(typeof session.ticked === 'boolean', `${where}.ticked is not a boolean`);
      return session;
    });
    const ticked = sessions.filter((s) => s.ticked).map(({ ticked: _ticked, ...rest }) => rest);
    return { project_id: project.project_id, enabled: project.enabled, sessions: ticked };
  });
}

/**
 * The sharing seam: read() fetches the driver's settings every time the relay consults
 * them; watch(onChange) long-polls for a new revision from the first one read (so the
 * relay's own first pass is never counted as a change) and returns a function that
 * stops it.
 */
export function driverSharing({ url, timeoutMs, stopSignal, log }) {
  let firstRevision;
  let firstRead;
  const firstSeen = new Promise((resolve) => {
    firstRead = resolve;
  });
  const get = (query, ms) => requestJson({
    method: 'GET', url: `${url}/sharing${query}`, label: `driver /sharing${query}`, timeoutMs: ms, stopSignal,
  });

  async function read() {
    const answer = await get('', timeoutMs);
    const projects = projectsOf(answer);
    if (firstRevision === undefined) {
      firstRevision = answer.revision;
      firstRead(answer.revision);
    }
    return projects;
  }

  function watch(onChange) {
    let stopped = false;
    (async () => {
      let seen = await firstSeen;
      while (!stopped) {
        try {
          const answer = await get(`?after=${seen}`, LONG_POLL_MS);
          check(Number.isInteger(answer.revision), '"revision" is not an integer');
          if (stopped) return;
          if (answer.revision !== seen) {
            seen = answer.revision;
            onChange();
          }
        } catch (err) {
          if (stopped) return;
          log(`${new Date().toISOString()} sharing-watch-failed - ${err.message}`);
          await sleep(WATCH_RETRY_MS);
        }
      }
    })();
    return () => {
      stopped = true;
    };
  }

  return { read, watch };
}

function planOf(plan) {
  check(typeof plan.duration === 'number' && plan.duration >= 0, '"duration" is not a number of seconds');
  check(plan.status === 'completed' || plan.status === 'failed', '"status" is not "completed" or "failed"');
  check(plan.error === undefined || plan.error === null || typeof plan.error === 'string', '"error" is not a string or null');
  return plan;
}

/**
 * The engine seam: start() asks the driver how the run goes and ends it that many
 * seconds later; the run's cancel() asks the driver how long stopping takes and ends
 * the run then as `cancelled`, unless it already ended: until the stop the run may
 * still end on its own, at its planned end (whichever comes first).
 */
export function driverEngine({ url, timeoutMs, stopSignal }) {
  const post = (tail, body) => requestJson({
    method: 'POST', url: url + tail, label: `driver ${tail}`, body, timeoutMs, stopSignal,
  });

  async function start({ commandId, channel, graphSessionId, arguments: args }) {
    const plan = planOf(await post('/runs', {
      command_id: commandId, channel, graph_session_id: graphSessionId, arguments: args,
    }));
    const figures = { totalTokens: plan.total_tokens, reportedCost: plan.reported_cost };
    let ended = false;
    let finish;
    const done = new Promise((resolve) => {
      finish = (outcome) => {
        if (ended) return;
        ended = true;
        resolve(outcome);
      };
    });
    const planned = setTimeout(
      () => finish({ status: plan.status, result: plan.result, error: plan.error, ...figures }),
      plan.duration * 1000,
    );
    async function cancel() {
      const answer = await post(`/runs/${encodeURIComponent(commandId)}/cancel`, {});
      check(typeof answer.stop_after === 'number' && answer.stop_after >= 0, '"stop_after" is not a number of seconds');
      if (ended) return;
      const stop = setTimeout(() => finish({ status: 'cancelled', ...figures }), answer.stop_after * 1000);
      done.then(() => { clearTimeout(planned); clearTimeout(stop); });
    }
    return { done, cancel };
  }

  return { start };
}
