/**
 * The CLI's REST client: JSON over fetch (Node's undici) to the scheduler's `/api/v1` routes,
 * with the API key as `Authorization: Bearer`. Errors keep the API's `{error: {code, message}}`.
 */

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

/** The service could not be reached (refused, DNS, reset). */
export class ConnectionError extends Error {
  constructor(url: string, cause: unknown) {
    super(`cannot reach the scheduler at ${url}: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'ConnectionError';
  }
}

/** Where the API is and how to authenticate. */
export interface ClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  apiKey?: string;
}

/** A small JSON client over fetch; one instance per command run. */
export class ApiClient {
  private readonly base: string;

  constructor(private readonly options: ClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  /**
   * Sends one request. @param path starts with `/` (query string included)
   * @param headers extra request headers (e.g. `traceparent`)
   * @returns the parsed JSON body (null when empty) and the status
   * @throws ApiError for a non-2xx answer; ConnectionError when the service cannot be reached
   */
  async request<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T }> {
    const url = `${this.base}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ConnectionError(this.base, (err as { cause?: unknown }).cause ?? err);
    }
    const text = await res.text();
    let parsed: Json = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (!res.ok) {
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
