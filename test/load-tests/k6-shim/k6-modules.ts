/**
 * Minimal stand-ins for the k6 modules the scripts in load-tests/k6/ import (`k6`, `k6/http`,
 * `k6/metrics`, `k6/execution`), enough to run an iteration of each for real against the service:
 *
 * - `k6/http`: get, post, put, patch, del, request, batch → `{status, body, headers, timings,
 *   json(path?), error, url, request}`; headers with k6's canonical names (`Retry-After`);
 *   params `headers`, `tags`, `timeout` ("60s" or ms). Every request is recorded as
 *   `http_req_duration` (tagged with `name`, `method`, `status`), `http_reqs` and `http_req_failed`
 *   (status 0 or ≥ 400, k6's default expected statuses).
 * - `k6`: check (records `checks`; a throwing condition propagates as in k6), group, sleep
 *   (blocking, capped at `sleepCapS`), fail.
 * - `k6/metrics`: Trend, Counter, Rate, Gauge with `add(value, tags?)`.
 * - `k6/execution`: `scenario` {name, iterationInTest, iterationInInstance}, `vu` {idInTest,
 *   iterationInScenario}, `test.abort()`.
 *
 * Not k6: requests run one at a time, and nothing here evaluates speed.
 */
import { blockFor, SyncHttp } from './sync-http';

export interface Sample {
  metric: string;
  value: number;
  tags: Record<string, string>;
}

export interface CheckResult {
  name: string;
  passes: number;
  fails: number;
}

/** What a run recorded: every metric sample, the checks, the custom metrics declared. */
export class Recorder {
  readonly samples: Sample[] = [];
  readonly checks = new Map<string, CheckResult>();
  readonly customMetrics = new Map<string, string>(); // name → type
  add(metric: string, value: number, tags: Record<string, string> = {}): void {
    this.samples.push({ metric, value, tags });
  }
}

/** The execution context the runner advances between iterations. */
export interface ExecContext {
  scenario: string;
  iterationInTest: number;
  vu: number;
}

/** k6 duration strings ("60s", "500ms", "2m", "1m30s") or numbers (ms) → ms. */
export function durationMs(v: unknown, def: number): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || v === '') return def;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m: RegExpExecArray | null;
  let matched = '';
  while ((m = re.exec(v)) !== null) {
    matched += m[0];
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  }
  if (matched !== v) throw new Error(`not a k6 duration: ${JSON.stringify(v)}`);
  return total;
}

const canonical = (name: string) =>
  name
    .split('-')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('-');

/** gjson-like path ("tasks", "tasks.0.task_id", "tasks.#") into parsed JSON. */
function jsonPath(value: unknown, path?: string): unknown {
  if (path === undefined || path === '') return value;
  let cur: any = value;
  for (const part of path.split('.')) {
    if (cur === null || cur === undefined) return undefined;
    cur = part === '#' && Array.isArray(cur) ? cur.length : cur[part];
  }
  return cur;
}

interface Params {
  headers?: Record<string, string>;
  tags?: Record<string, string>;
  timeout?: string | number;
}

/** Builds the module objects, keyed by the specifier the scripts import. */
export function k6Modules(
  rec: Recorder,
  ctx: ExecContext,
  sleepCapS: number,
): { modules: Record<string, Record<string, unknown>>; close: () => Promise<number> } {
  const sync = new SyncHttp();

  function request(method: string, url: string, body?: unknown, params: Params = {}) {
    const headers: Record<string, string> = { ...(params.headers ?? {}) };
    const payload = body === undefined || body === null ? null : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    const r = sync.request({ method, url, body: payload, headers, timeoutMs: durationMs(params.timeout, 60_000) });
    const tags = { name: url, ...(params.tags ?? {}), method, status: String(r.status) };
    rec.add('http_req_duration', r.durationMs, tags);
    rec.add('http_req_waiting', r.waitingMs, tags);
    rec.add('http_reqs', 1, tags);
    rec.add('http_req_failed', r.status === 0 || r.status >= 400 ? 1 : 0, tags);
    const resHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) resHeaders[canonical(k)] = v;
    let parsed: unknown;
    let parsedOk = false;
    return {
      status: r.status,
      body: r.body,
      headers: resHeaders,
      url,
      error: r.error ?? '',
      error_code: r.error ? 1000 : 0,
      request: { method, url, body: payload, headers },
      timings: {
        duration: r.durationMs,
        waiting: r.waitingMs,
        blocked: 0,
        connecting: 0,
        tls_handshaking: 0,
        sending: 0,
        receiving: r.durationMs - r.waitingMs,
      },
      json(path?: string) {
        if (!parsedOk) {
          parsed = JSON.parse(r.body ?? ''); // throws like k6 on a body that is not JSON
          parsedOk = true;
        }
        return jsonPath(parsed, path);
      },
    };
  }

  type BatchItem = string | [string, string, unknown?, Params?] | { method?: string; url: string; body?: unknown; params?: Params };
  const http = {
    get: (url: string, params?: Params) => request('GET', url, null, params),
    head: (url: string, params?: Params) => request('HEAD', url, null, params),
    post: (url: string, body?: unknown, params?: Params) => request('POST', url, body, params),
    put: (url: string, body?: unknown, params?: Params) => request('PUT', url, body, params),
    patch: (url: string, body?: unknown, params?: Params) => request('PATCH', url, body, params),
    del: (url: string, body?: unknown, params?: Params) => request('DELETE', url, body, params),
    request: (method: string, url: string, body?: unknown, params?: Params) => request(method, url, body, params),
    batch: (items: BatchItem[] | Record<string, BatchItem>) => {
      const one = (it: BatchItem) => {
        if (typeof it === 'string') return request('GET', it);
        if (Array.isArray(it)) return request(it[0], it[1], it[2], it[3]);
        return request(it.method ?? 'GET', it.url, it.body, it.params);
      };
      if (Array.isArray(items)) return items.map(one);
      return Object.fromEntries(Object.entries(items).map(([k, v]) => [k, one(v)]));
    },
  };

  const k6 = {
    check(value: unknown, sets: Record<string, (v: any) => boolean>, tags: Record<string, string> = {}): boolean {
      let all = true;
      for (const [name, fn] of Object.entries(sets)) {
        const ok = Boolean(typeof fn === 'function' ? fn(value) : fn);
        const c = rec.checks.get(name) ?? { name, passes: 0, fails: 0 };
        if (ok) c.passes++;
        else c.fails++;
        rec.checks.set(name, c);
        rec.add('checks', ok ? 1 : 0, { check: name, ...tags });
        all &&= ok;
      }
      return all;
    },
    group<T>(_name: string, fn: () => T): T {
      return fn();
    },
    sleep(s: number): void {
      blockFor(Math.min(Math.max(0, s), sleepCapS) * 1000);
    },
    fail(msg?: string): never {
      throw new Error(msg ?? 'fail()');
    },
  };

  function metric(type: string) {
    return class {
      constructor(readonly name: string) {
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new Error(`invalid k6 metric name ${JSON.stringify(name)}`);
        rec.customMetrics.set(name, type);
      }
      add(value: number | boolean, tags: Record<string, string> = {}): void {
        const v = typeof value === 'boolean' ? Number(value) : value;
        if (typeof v !== 'number' || Number.isNaN(v)) throw new Error(`${type} ${this.name}.add(${String(value)}): not a number`);
        rec.add(this.name, v, tags);
      }
    };
  }
  const metrics = { Trend: metric('trend'), Counter: metric('counter'), Rate: metric('rate'), Gauge: metric('gauge') };

  const execution = {
    get scenario() {
      return {
        name: ctx.scenario,
        iterationInTest: ctx.iterationInTest,
        iterationInInstance: ctx.iterationInTest,
        executor: 'smoke',
        startTime: Date.now(),
        progress: 0,
      };
    },
    get vu() {
      return { idInTest: ctx.vu, idInInstance: ctx.vu, iterationInInstance: ctx.iterationInTest, iterationInScenario: ctx.iterationInTest };
    },
    instance: { vusActive: 1, vusInitialized: 1, iterationsCompleted: 0, iterationsInterrupted: 0, currentTestRunDuration: 0 },
    test: {
      abort(msg?: string): never {
        throw new Error(`test.abort(${msg ?? ''})`);
      },
    },
  };

  return { modules: { k6, 'k6/http': http, 'k6/metrics': metrics, 'k6/execution': execution }, close: () => sync.close() };
}
