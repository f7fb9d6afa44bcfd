/**
 * The HTTP transport of the SDK (client, workers) and the CLI: JSON over Node's http and https modules to the scheduler's `/api/v1`
 * routes, with the API key as `Authorization: Bearer`. Errors keep the API's `{error: {code, message}}`.
 * (Not fetch: Node 20's fetch cannot be given a CA or a client certificate without undici's API.)
 */
import http from 'node:http';
import https from 'node:https';

/**
 * A JSON body as the server sent it. The CLI prints it and reads the few fields docs/API.md
 * documents, so it stays untyped here; typed views belong to a typed client of the API.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one untyped JSON alias of the CLI
export type Json = any;

/** An answer outside 2xx: `status` and the API's error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** TLS errors of a server certificate the client does not trust (Node's codes). */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** The service could not be reached (refused, DNS, reset, a certificate not trusted). */
export class ConnectionError extends Error {
  constructor(url: string, cause: unknown) {
    const code = (cause as { code?: string })?.code;
    const hint = code && UNTRUSTED_CERTIFICATE.has(code) ? ' (give the CA of its certificate with --ca-file or SCHEDULER_CA_FILE)' : '';
    super(`cannot reach the scheduler at ${url}: ${(cause as Error)?.message ?? String(cause)}${hint}`);
    this.name = 'ConnectionError';
  }
}

/** PEM files for an https URL: CA certificates to trust besides the system ones, and a client certificate and key. */
export interface TlsFiles {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** Where the API is and how to authenticate. */
export interface ClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  apiKey?: string;
  /** For an https URL (ignored for http). */
  tls?: TlsFiles;
}

/** A small JSON client over node:http and node:https; one instance per command run. */
export class ApiClient {
  private readonly base: string;

  constructor(private readonly options: ClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  /**
   * Sends one request. @param path starts with `/` (query string included)
   * @param headers extra request headers (e.g. `traceparent`)
   * @param signal aborts the request (a long poll given up): it then rejects with a ConnectionError whose `cause` is the abort
   * @returns the parsed JSON body (null when empty) and the status
   * @throws ApiError for a non-2xx answer; ConnectionError when the service cannot be reached
   */
  async request<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<{ status: number; body: T }> {
    const url = `${this.base}${path}`;
    let res: { status: number; statusText: string; text: string };
    try {
      res = await this.send(
        method,
        url,
        body === undefined ? undefined : JSON.stringify(body),
        {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...headers,
        },
        signal,
      );
    } catch (err) {
      throw new ConnectionError(this.base, err);
    }
    const text = res.text;
    let parsed: Json = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (res.status < 200 || res.status > 299) {
      const e = parsed?.error;
      throw new ApiError(
        res.status,
        e?.code ?? `HTTP_${res.status}`,
        e?.message ?? (typeof parsed === 'string' ? parsed : res.statusText),
        e?.details ?? {},
      );
    }
    return { status: res.status, body: parsed as T };
  }

  /** One HTTP exchange (keep-alive: Node's global agents); rejects when no answer comes (refused, DNS, TLS, reset). */
  private send(
    method: string,
    url: string,
    body: string | undefined,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ status: number; statusText: string; text: string }> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        throw new TypeError(`${target.protocol} URLs are not supported (http or https)`);
      const onResponse = (res: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') }),
        );
      };
      const req =
        target.protocol === 'https:'
          ? https.request(target, { method, headers, signal, ...this.options.tls }, onResponse)
          : http.request(target, { method, headers, signal }, onResponse);
      req.on('error', reject);
      req.end(body);
    });
  }

  /** GET with a query built from the defined entries of `query`. */
  get<T = Json>(path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return this.request<T>('GET', q ? `${path}?${q}` : path).then((r) => r.body);
  }

  /** POST a JSON body; @returns the parsed answer. */
  post<T = Json>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.request<T>('POST', path, body, headers).then((r) => r.body);
  }

  /** PATCH a JSON body; @returns the parsed answer. */
  patch<T = Json>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body).then((r) => r.body);
  }
}
