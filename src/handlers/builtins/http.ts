import { PermanentError, TaskHandler } from '../types';

interface HttpPayload {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Webhook delivery with Node's fetch (undici). Payload `{url, method = POST, headers, body}`.
 * 2xx → `{status, body}`; 4xx → PermanentError (retrying the same request cannot help);
 * 5xx and network errors → retryable. Aborts with the task's signal.
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
  const res = await fetch(url, { method, headers, body: hasBody ? JSON.stringify(p.body) : undefined, signal: ctx.signal });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* keep the text */
  }
  if (res.status >= 200 && res.status < 300) return { status: res.status, body };
  const message = `HTTP ${res.status} from ${url.origin}${url.pathname}`;
  if (res.status >= 400 && res.status < 500) throw new PermanentError(message);
  throw new Error(message);
};
