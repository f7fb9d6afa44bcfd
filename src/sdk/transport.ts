/**
 * The HTTP transport of the SDK (client, workers) and the CLI: JSON over Node's http and https modules to the scheduler's `/api/v1`
 * routes, with the API key as `Authorization: Bearer`. Errors keep the API's `{error: {code, message, details}}`
 * (./errors.ts). Answers 429 and 503 are retried (./retry.ts), honouring `Retry-After`.
 * (Not fetch: Node 20's fetch cannot be given a CA or a client certificate without undici's API.)
 */
import http from 'node:http';
import https from 'node:https';
import { apiErrorOf, ClientOptionError, ConnectionError, MAX_BODY_DEPTH, RequestBodyError, SchedulerApiError } from './errors';
import { checkTlsFiles, type TlsFiles } from './tls-files';
import { jsonProblem, nonFiniteNumberMessage } from './json-numbers';
import { backoffDelayMs, mayRetryAfterConnectionError, retryAfterMs, retryDelayMs, RetryOptions, RETRY_STATUSES } from './retry';
import { answerOf, hasMediaType, NOT_JSON, notAnObjectError, notJsonError, notMetricsError, parseBody, RawResponse } from './answers';
import { baseUrlsOf, checkApiKey } from './client-options';

export type { TlsFiles };

export { ConnectionError, SchedulerApiError };
export { baseUrlsOf };
export type { RetryOptions };

/** The error of an API answer outside 2xx (the name the CLI has always used). */
export const ApiError = SchedulerApiError;
export type ApiError = SchedulerApiError;

/**
 * A JSON body as the server sent it, for callers that read it untyped (the typed client gives
 * each route its view type).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one untyped JSON alias of the SDK
export type Json = any;

/**
 * Where the API is, how to authenticate, and how to retry. An option given as `undefined` is the
 * same as one left out (so `apiKey: process.env.SCHEDULER_API_KEY` compiles under
 * `exactOptionalPropertyTypes`).
 */
export interface ClientOptions {
  /**
   * Base URL, e.g. `http://127.0.0.1:8080`; or several, the members of a cluster. Requests go to
   * one of them at a time, the first at the start. After a connection error or a 503 answer the
   * client turns to the next (round robin), for that request's retry and for the requests after
   * it (failover as Celery's broker URL list; docs/CLIENT.md). A path is a prefix of every
   * request's path; a query, a fragment, credentials, white space at the ends, or one member
   * listed twice is refused.
   */
  url: string | readonly string[];
  apiKey?: string | undefined;
  /** For an https URL (ignored for http). */
  tls?: TlsFiles | undefined;
  /** Retries of 429/503 answers and of connection errors (see {@link RetryOptions}). */
  retry?: RetryOptions | undefined;
  /** Longest wait for one answer, in ms (default 30,000); a long poll adds its own wait to it. */
  fetchTimeoutMs?: number | undefined;
  /** Waits `ms` (default a timer); tests inject one that returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /** Epoch ms (default `Date.now`): for `Retry-After` given as an HTTP date, and for waits' deadlines. */
  now?: () => number;
  /** 0 ≤ x < 1 (default `Math.random`): the jitter of backoff delays. */
  random?: () => number;
}

/** One request's options besides method and path. */
export interface RequestOptions {
  body?: unknown;
  /** Query parameters; undefined entries are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Extra request headers (e.g. `traceparent`). */
  headers?: Record<string, string>;
  /**
   * The request may be repeated safely (it carries an idempotency key, or sets a value): a
   * connection error mid-request is then retried like one of a GET.
   */
  idempotent?: boolean;
  /** This request's answer timeout in ms (default the client's `fetchTimeoutMs`). */
  timeoutMs?: number;
  /**
   * The answer is text of one of these media types (`/metrics`: `text/plain`, `application/openmetrics-text`),
   * returned as it came; another content type is another server's page (code `NOT_METRICS`). Without
   * it a 2xx body must be JSON or empty (code `NOT_JSON`).
   */
  text?: readonly string[];
  /** Statuses outside 2xx answered as a body, not thrown (e.g. 503 of `/readyz`). */
  okStatuses?: number[];
  /** Send once: no retry of 429/503 or of connection errors. */
  noRetry?: boolean;
  /**
   * This request's tries (default the client's `retry.maxAttempts`): a wait passes Infinity so that
   * a service restarting during it is tried again until its deadline (`retryUntil`).
   */
  maxAttempts?: number;
  /**
   * With several base URLs, after a connection error (of a request that may be repeated) send it
   * at once to the next member, each member at most once, even with `noRetry` (`/readyz`: the
   * first member that answers says whether it is ready).
   */
  eachMemberOnce?: boolean;
  /** No retry starts after this instant (epoch ms, the client's `now`): a wait's deadline. */
  retryUntil?: number;
  /** Aborts the request (a long poll given up): it then rejects with a ConnectionError, not retried. */
  signal?: AbortSignal;
}

/** An answer in 2xx. */
export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: http.IncomingHttpHeaders;
}

const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

/** A small JSON client over node:http and node:https (keep-alive through Node's global agents). */
export class ApiClient {
  private readonly bases: readonly string[];
  /** Index in {@link bases} of the URL requests go to now. */
  private current = 0;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Epoch ms, as the client's options give it (used by waits for their deadlines). */
  readonly now: () => number;
  private readonly random: () => number;

  /**
   * @throws TypeError (ClientOptionError) when `options.url` is refused as {@link baseUrlsOf} says (the message names it),
   *   `options.apiKey` holds what a header cannot carry (`apiKey: …`), `fetchTimeoutMs` is not a
   *   number of ms from 1 to 2^31 − 1, or, for an https URL, a TLS file cannot work (`tls.ca: …`, tls-files.ts)
   */
  constructor(private readonly options: ClientOptions) {
    this.bases = baseUrlsOf(options?.url);
    checkApiKey(options.apiKey);
    const t = options.fetchTimeoutMs;
    // Node's timers take 1 ms to 2^31 − 1 ms; outside that a string failed at the first call with
    // ERR_INVALID_ARG_TYPE, and -1 as "cannot reach the scheduler".
    if (t !== undefined && !(typeof t === 'number' && t >= 1 && t <= 2_147_483_647))
      throw new ClientOptionError('fetchTimeoutMs', `must be a number of ms from 1 to 2147483647 (got ${JSON.stringify(t) ?? String(t)})`);
    if (this.bases.some((b) => b.startsWith('https:'))) checkTlsFiles(options.tls);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** The base URL requests go to now (the first of several until a failover). */
  get base(): string {
    return this.bases[this.current];
  }

  /** Each answer's timeout in ms unless a request gives its own (`fetchTimeoutMs`, default 30,000); a long poll adds its wait. */
  get fetchTimeoutMs(): number {
    return this.options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  }

  /** Waits `ms` with the client's sleep (injected in tests). */
  pause(ms: number): Promise<void> {
    return this.sleep(ms);
  }

  /**
   * Sends one request, retrying 429 and 503 answers (nothing was done: safe for any method) after
   * their `Retry-After` or a backoff, and connection errors of GET/HEAD or idempotent requests.
   * @param path starts with `/` (without query string: give `query`)
   * @returns the parsed JSON body (null when empty), the status and the headers
   * @throws SchedulerApiError (a subclass per status) for a non-2xx answer; ConnectionError when
   *   the service cannot be reached or does not answer within the timeout; RequestBodyError (a
   *   TypeError), before sending, for a body holding NaN or ±Infinity (JSON would send null; the
   *   message names the path) or nesting deeper than {@link MAX_BODY_DEPTH} levels
   */
  async request<T = Json>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const query = qs.size ? `?${qs}` : '';
    const odd = options.body === undefined ? null : jsonProblem(options.body, MAX_BODY_DEPTH);
    if (odd?.kind === 'number') throw new RequestBodyError(nonFiniteNumberMessage('body', odd));
    if (odd?.kind === 'date')
      throw new RequestBodyError(`body${odd.path}: an invalid Date (its time is NaN), which JSON would send as null`);
    if (odd)
      throw new RequestBodyError(`body nests deeper than ${MAX_BODY_DEPTH} levels (the service takes payloads and results of at most 64)`);
    let body: string | undefined;
    try {
      body = options.body === undefined ? undefined : JSON.stringify(options.body);
    } catch (err) {
      // A BigInt, a cycle, a toJSON that throws: JSON.stringify's own words, as the typed refusal.
      throw new RequestBodyError(`body cannot be written as JSON: ${(err as Error)?.message ?? String(err)}`);
    }
    const headers = {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      ...options.headers,
    };
    const timeoutMs = options.timeoutMs ?? this.options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
    const maxAttempts = options.noRetry ? 1 : Math.max(1, options.maxAttempts ?? this.options.retry?.maxAttempts ?? 3);
    const mayRetry = (attempt: number) => attempt < maxAttempts && (options.retryUntil === undefined || this.now() < options.retryUntil);
    for (let attempt = 1; ; attempt++) {
      let res: RawResponse;
      const base = this.base;
      try {
        res = await this.send(method, `${base}${path}${query}`, body, headers, timeoutMs, options.signal);
      } catch (err) {
        if (err instanceof TypeError) throw err;
        if (options.signal?.aborted) throw new ConnectionError(base, err);
        this.failOver(base);
        const repeatable = mayRetryAfterConnectionError(method, options.idempotent === true, err);
        if (options.eachMemberOnce && repeatable && attempt < this.bases.length) continue;
        const retry = mayRetry(attempt) && repeatable;
        if (!retry) throw new ConnectionError(base, err);
        await this.sleep(backoffDelayMs(attempt, this.options.retry, this.random));
        continue;
      }
      if ((res.status >= 200 && res.status <= 299) || options.okStatuses?.includes(res.status)) {
        if (options.text) {
          if (!hasMediaType(res, options.text)) throw notMetricsError(res, `${method} ${base}${path}`, options.text);
          return { status: res.status, body: res.text as T, headers: res.headers };
        }
        // The scheduler answers a JSON object (or nothing): other text is another server (a proxy's
        // or a login page), and a JSON value of another kind (`null`, a number) is not its answer either.
        // Every answer of the scheduler has a body: an empty 2xx (but a 204) is not its answer either.
        const answer = res.text === '' && res.status !== 204 ? NOT_JSON : answerOf(res.text);
        if (answer === NOT_JSON) throw notJsonError(res, `${method} ${base}${path}`);
        if (answer === null ? res.text !== '' : typeof answer !== 'object') throw notAnObjectError(res, `${method} ${base}${path}`);
        return { status: res.status, body: answer as T, headers: res.headers };
      }
      const after = retryAfterMs(res.headers['retry-after'], this.now());
      if (res.status === 503) this.failOver(base); // a member stopping, or without its store: another may answer
      if (RETRY_STATUSES.has(res.status) && mayRetry(attempt)) {
        await this.sleep(retryDelayMs(after, attempt, this.options.retry, this.random));
        continue;
      }
      throw apiErrorOf(res.status, res.statusText, parseBody(res.text), after);
    }
  }

  /** Turns to the next base URL after `failed` did not serve (unless another request already turned away from it). */
  private failOver(failed: string): void {
    if (this.bases.length > 1 && this.bases[this.current] === failed) this.current = (this.current + 1) % this.bases.length;
  }

  /** One HTTP exchange; rejects when no answer comes (refused, DNS, TLS, reset, no answer within `timeoutMs`). */
  private send(
    method: string,
    url: string,
    body: string | undefined,
    headers: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        throw new TypeError(`${target.protocol} URLs are not supported (http or https)`);
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      // `signal` stops a request only until its answer begins to arrive (the first bytes on the
      // socket, before Node has parsed them): the service may have acted on it (a lease's tasks are
      // claimed for this worker), so an answer on its way is read whole.
      let answering = false;
      let timedOut: Error | null = null;
      const fail = (err: unknown) => {
        clearTimeout(timer);
        reject(timedOut ?? err);
      };
      const onAbort = () => {
        if (!answering) req.destroy(Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const onResponse = (res: http.IncomingMessage) => {
        signal?.removeEventListener('abort', onAbort);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
          });
        });
      };
      // The path as written (apiPath escapes `.` and `..` segments as %2E): WHATWG URL parsing would
      // remove them, %2E included, and send `/api/v1/concurrency-limits/..` to `/api/v1/`.
      const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
      const req =
        target.protocol === 'https:'
          ? https.request(target, { method, headers, path, ...this.options.tls }, onResponse)
          : http.request(target, { method, headers, path }, onResponse);
      // A deadline for the whole answer, not an idle timeout (`req.setTimeout`): an answer that
      // trickles in a byte at a time must not hold the caller past `timeoutMs`.
      const timer = setTimeout(() => {
        timedOut = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT', sent: true });
        req.destroy(timedOut);
      }, timeoutMs);
      req.once('close', () => clearTimeout(timer));
      if (signal)
        req.once('socket', (socket) => {
          const mark = () => (answering = true);
          socket.prependOnceListener('data', mark);
          req.once('close', () => socket.removeListener('data', mark));
        });
      req.on('error', (err) => {
        signal?.removeEventListener('abort', onAbort);
        fail(err);
      });
      req.end(body);
    });
  }

  /** GET with a query built from the defined entries of `query`. */
  get<T = Json>(path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<T> {
    return this.request<T>('GET', path, { query }).then((r) => r.body);
  }

  /** POST a JSON body; @returns the parsed answer. */
  post<T = Json>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.request<T>('POST', path, { body, headers }).then((r) => r.body);
  }

  /** PATCH a JSON body; @returns the parsed answer. */
  patch<T = Json>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body }).then((r) => r.body);
  }
}
