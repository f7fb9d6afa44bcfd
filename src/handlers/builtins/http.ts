import { describeError } from '../../domain/attempt-error';
import { PermanentError, TaskHandler } from '../types';

/**
 * Methods `fetch` refuses to send (the Fetch standard's "forbidden methods", compared
 * case-insensitively): a task with one could only fail, attempt after attempt.
 */
export const FORBIDDEN_HTTP_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'TRACE', 'TRACK']);

interface HttpPayload {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Webhook delivery with Node's fetch (undici). Payload `{url, method = POST, headers, body}`.
 * 2xx → `{status, body}`; 4xx → PermanentError (retrying the same request cannot help);
 * 5xx and network errors → retryable. Aborts with the task's signal. An HTTP failure carries its
 * `status`; a network failure names its cause and code (`connect ECONNREFUSED 127.0.0.1:9999`).
 */
export const http: TaskHandler = async (payload, ctx) => {
  const p = (payload ?? {}) as Partial<HttpPayload>;
  if (typeof p.url !== 'string') throw new PermanentError('payload.url must be a string');
  let url: URL;
  try {
    url = new URL(p.url);
  } catch {
    throw new PermanentError(`payload.url is not a valid URL: ${p.url}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PermanentError('payload.url must use http or https');
  }
  const method = typeof p.method === 'string' ? p.method.toUpperCase() : p.method === undefined ? 'POST' : '';
  if (!/^[A-Z]+$/.test(method)) throw new PermanentError('payload.method must be an HTTP method name such as POST');
  if (FORBIDDEN_HTTP_METHODS.has(method)) throw new PermanentError(`payload.method ${method} cannot be sent by fetch`);
  const hasBody = p.body !== undefined && method !== 'GET' && method !== 'HEAD';
  let headers: Headers;
  try {
    // Invalid header names or values can never succeed: say so once instead of retrying.
    headers = new Headers({
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      'idempotency-key': ctx.idempotencyKey ?? `${ctx.taskId}`,
      ...p.headers,
    });
  } catch (err) {
    throw new PermanentError(`payload.headers: ${(err as Error).message}`);
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: hasBody ? JSON.stringify(p.body) : undefined, signal: ctx.signal });
  } catch (err) {
    throw networkError(err, method, url);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* keep the text */
  }
  if (res.status >= 200 && res.status < 300) return { status: res.status, body };
  const message = `HTTP ${res.status} from ${method} ${url.origin}${url.pathname}`;
  // `status` is kept with the attempt's error as `http_status` (domain/attempt-error.ts).
  if (res.status >= 400 && res.status < 500) throw Object.assign(new PermanentError(message), { status: res.status });
  throw Object.assign(new Error(message), { status: res.status });
};

/**
 * fetch's network failure (undici's `TypeError: fetch failed`) with its cause in the message and
 * its code on the error: `POST http://127.0.0.1:9999/: fetch failed: connect ECONNREFUSED 127.0.0.1:9999`, code
 * `ECONNREFUSED`. The original stays as its `cause`. Anything else (an abort: timeout, cancel) is
 * rethrown as is.
 */
function networkError(err: unknown, method: string, url: URL): unknown {
  // undici's network failures are TypeErrors; an abort rejects with the signal's reason, kept as it is.
  if (!(err instanceof TypeError)) return err;
  const root = rootCause(err);
  const reason = root === err ? err.message : `${err.message}: ${describeError(root).message}`;
  const code = (root as { code?: unknown }).code;
  return Object.assign(new Error(`${method} ${url.origin}${url.pathname}: ${reason}`, { cause: err }), {
    name: 'HttpRequestError',
    ...(typeof code === 'string' ? { code } : {}),
  });
}

/** The innermost `cause` of `err` (at most 5 down). */
function rootCause(err: Error): object {
  let e: object = err;
  for (let i = 0; i < 5; i++) {
    const next = (e as { cause?: unknown }).cause;
    if (next === null || typeof next !== 'object') break;
    e = next;
  }
  return e;
}
