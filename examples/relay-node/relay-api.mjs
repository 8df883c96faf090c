// A client for the osFoundry relay API (the server side of the desktop relay).
//
// Every call is one JSON exchange under {baseUrl}/external-assistants/graph-relays with
// "Authorization: Bearer <desktop token>" and a time-out. A reply outside 2xx throws an
// HttpError carrying the status; a lost reply (refused connection, reset, time-out)
// throws a RequestError; a body that is not the JSON object the API promises throws a
// ProtocolError. The token never appears in an error message.

const PREFIX = '/external-assistants/graph-relays';

/** The server answered outside 2xx; `status` holds the HTTP status. */
export class HttpError extends Error {
  constructor(method, where, status) {
    super(`${method} ${where} answered HTTP ${status}`);
    this.name = 'HttpError';
    this.status = status;
  }
}

/** No answer arrived: refused connection, dropped connection or time-out. */
export class RequestError extends Error {
  constructor(method, where, reason) {
    super(`${method} ${where} got no answer: ${reason}`);
    this.name = 'RequestError';
  }
}

/** An answer arrived but is not what the API promises. */
export class ProtocolError extends Error {
  constructor(method, where, what) {
    super(`${method} ${where} answered ${what}`);
    this.name = 'ProtocolError';
  }
}

/**
 * One JSON request with a time-out, aborted early by `stopSignal` (optional). Returns
 * the parsed answer (an object) or throws HttpError / RequestError / ProtocolError.
 * `label` names the request in errors (never the URL's query, never a header).
 */
export async function requestJson({ method, url, label, headers = {}, body, timeoutMs, stopSignal }) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  const onStop = () => controller.abort(new Error('the relay is stopping'));
  stopSignal?.addEventListener('abort', onStop, { once: true });
  let status;
  let text;
  try {
    const reply = await fetch(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
    });
    status = reply.status;
    text = await reply.text();
  } catch (err) {
    const reason = controller.signal.aborted ? controller.signal.reason?.message : causeOf(err);
    throw new RequestError(method, label, reason);
  } finally {
    clearTimeout(timer);
    stopSignal?.removeEventListener('abort', onStop);
  }
  if (status < 200 || status > 299) throw new HttpError(method, label, status);
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ProtocolError(method, label, `HTTP ${status} with a body that is not JSON`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ProtocolError(method, label, 'JSON that is not an object');
  }
  return data;
}

function causeOf(err) {
  const cause = err?.cause;
  return cause?.code ?? cause?.message ?? err?.message ?? String(err);
}

/** The desktop's side of the relay API, bound to one base URL and one desktop token. */
export class RelayApi {
  /**
   * `baseUrl`: the server's origin (a trailing "/" is fine). `token`: the desktop token.
   * `timeoutSeconds`: how long any one request may take. `stopSignal`: an AbortSignal
   * that ends every request under way when the relay stops (optional).
   */
  constructor({ baseUrl, token, timeoutSeconds = 10, stopSignal }) {
    if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl)) {
      throw new TypeError(`the relay API URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
    }
    if (typeof token !== 'string' || token === '') throw new TypeError('the desktop token is empty');
    this.base = baseUrl.replace(/\/+$/, '') + PREFIX;
    this.headers = { Accept: 'application/json', Authorization: `Bearer ${token}` };
    this.timeoutMs = Math.round(timeoutSeconds * 1000);
    this.stopSignal = stopSignal;
  }

  async #call(method, tail, body) {
    return requestJson({
      method,
      url: this.base + tail,
      label: PREFIX + tail,
      headers: this.headers,
      body,
      timeoutMs: this.timeoutMs,
      stopSignal: this.stopSignal,
    });
  }

  #command(commandId, action) {
    return `/commands/${encodeURIComponent(commandId)}/${action}`;
  }

  /** POST .../sync: upload a project's shared sessions; returns its queued commands. */
  async sync(projectId, sessions) {
    const data = await this.#call('POST', '/sync', { project_id: projectId, sessions });
    if (!Array.isArray(data.commands)) {
      throw new ProtocolError('POST', `${PREFIX}/sync`, 'no "commands" list');
    }
    return data.commands;
  }

  /** POST .../commands/{id}/start: returns the status the server answers ("running"/"cancelled"). */
  async start(commandId, executionId) {
    const tail = this.#command(commandId, 'start');
    const data = await this.#call('POST', tail, { execution_id: executionId });
    if (typeof data.status !== 'string') throw new ProtocolError('POST', PREFIX + tail, 'no "status" string');
    return data.status;
  }

  /** GET .../commands/{id}/control: {status, cancel_requested}. */
  async control(commandId) {
    return this.#call('GET', this.#command(commandId, 'control'));
  }

  /** POST .../commands/{id}/complete with a bounded completion. */
  async complete(commandId, body) {
    return this.#call('POST', this.#command(commandId, 'complete'), body);
  }
}
