/**
 * Runs one compiled k6 script (dist/load-tests/k6/*.js) under the stand-ins of k6-modules.ts,
 * in its own process: `node run-script.js SCRIPT.js ENV_JSON`.
 *
 * Like a k6 run, in order: the init context (the script's top level, with `__ENV` = ENV_JSON),
 * a check of `options` (every scenario's `exec` is an exported function, every threshold names
 * a built-in or a declared metric and has a valid expression), `setup()` (its result passed
 * through JSON, as k6 does), each scenario's function for its iterations (shared-iterations and
 * per-vu-iterations up to 50; one iteration for the rate- and duration-based executors), then
 * `teardown(data)`. Prints one JSON line (RunSummary) to stdout and exits 0, or prints the error
 * and exits 1. Thresholds are evaluated for information only: the smoke test never asserts speed.
 */
import Module from 'node:module';
import path from 'node:path';
import { k6Modules, Recorder } from './k6-modules';

export interface RunSummary {
  script: string;
  scenarios: Array<{ name: string; exec: string; iterations: number }>;
  checks: Array<{ name: string; passes: number; fails: number }>;
  requests: number;
  failed_requests: Array<{ name: string; method: string; status: string }>;
  custom_metrics: Record<string, { type: string; samples: number }>;
  thresholds: Array<{ metric: string; expression: string; value: number | null; ok: boolean | null }>;
  problems: string[];
}

const BUILTIN = new Set([
  'checks',
  'data_received',
  'data_sent',
  'dropped_iterations',
  'group_duration',
  'http_req_blocked',
  'http_req_connecting',
  'http_req_duration',
  'http_req_failed',
  'http_req_receiving',
  'http_req_sending',
  'http_req_tls_handshaking',
  'http_req_waiting',
  'http_reqs',
  'iteration_duration',
  'iterations',
  'vus',
  'vus_max',
]);
const EXPR = /^(avg|min|max|med|count|rate|value|p\((\d+(?:\.\d+)?)\))\s*(<=|>=|==|===|!=|<|>)\s*(-?\d+(?:\.\d+)?)$/;
const MAX_ITERATIONS = 50;
const SLEEP_CAP_S = Number(process.env.K6_SMOKE_SLEEP_CAP_S ?? 0.25);

/** Parses "name{tag:value,…}" → metric name and tag filter. */
function thresholdKey(key: string): { metric: string; tags: Record<string, string> } {
  const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key);
  const tags: Record<string, string> = {};
  for (const part of (m?.[2] ?? '').split(',').filter(Boolean)) {
    const i = part.indexOf(':');
    tags[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return { metric: (m?.[1] ?? key).trim(), tags };
}

function aggregate(values: number[], agg: string, type: string): number | null {
  if (values.length === 0) return type === 'counter' ? 0 : null;
  const sorted = [...values].sort((a, b) => a - b);
  const p = /^p\((.+)\)$/.exec(agg);
  if (p) return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((Number(p[1]) / 100) * sorted.length) - 1))];
  switch (agg) {
    case 'avg':
    case 'rate':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min':
      return sorted[0];
    case 'max':
      return sorted[sorted.length - 1];
    case 'med':
      return sorted[Math.floor(sorted.length / 2)];
    case 'count':
      return values.reduce((a, b) => a + b, 0);
    default:
      return values[values.length - 1]; // value (gauge)
  }
}

function compare(a: number, op: string, b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : op === '>=' ? a >= b : op === '!=' ? a !== b : a === b;
}

export function runScript(scriptPath: string, env: Record<string, string>): RunSummary {
  const rec = new Recorder();
  const ctx = { scenario: 'default', iterationInTest: 0, vu: 0 };
  const { modules } = k6Modules(rec, ctx, SLEEP_CAP_S);
  const g = globalThis as Record<string, unknown>;
  g.__ENV = { ...env };
  g.__VU = 0;
  g.__ITER = 0;
  const load = (Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown })._load;
  (Module as unknown as { _load: typeof load })._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'k6' || request.startsWith('k6/')) {
      const mod = modules[request];
      if (!mod)
        throw new Error(
          `the smoke test has no stand-in for k6 module ${JSON.stringify(request)}: add one to test/load-tests/k6-shim/k6-modules.ts`,
        );
      return { __esModule: true, default: mod, ...mod };
    }
    return load.call(this, request, parent, isMain);
  };

  // A k6 script is loaded by path at run time, through the module hook installed above.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const script = require(path.resolve(scriptPath)) as Record<string, any>;
  const options = (script.options ?? {}) as Record<string, any>;
  const problems: string[] = [];

  const scenarios: RunSummary['scenarios'] = [];
  for (const [name, sc] of Object.entries(
    (options.scenarios ?? { default: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } }) as Record<string, any>,
  )) {
    const exec = sc.exec ?? 'default';
    if (typeof script[exec] !== 'function') problems.push(`scenario ${name}: exec ${exec} is not an exported function`);
    let iterations = 1;
    if (sc.executor === 'shared-iterations') iterations = sc.iterations ?? 1;
    else if (sc.executor === 'per-vu-iterations') iterations = (sc.iterations ?? 1) * (sc.vus ?? 1);
    if (iterations > MAX_ITERATIONS)
      problems.push(`scenario ${name}: ${iterations} iterations; give the smoke run smaller sizes through __ENV`);
    scenarios.push({ name, exec, iterations });
  }
  const thresholds: Array<{
    key: string;
    metric: string;
    tags: Record<string, string>;
    expression: string;
    agg: string;
    op: string;
    bound: number;
  }> = [];
  for (const [key, list] of Object.entries((options.thresholds ?? {}) as Record<string, unknown[]>)) {
    const { metric, tags } = thresholdKey(key);
    if (!BUILTIN.has(metric) && !rec.customMetrics.has(metric)) problems.push(`threshold ${key}: no metric named ${metric}`);
    for (const t of list) {
      const expression = typeof t === 'string' ? t : String((t as { threshold?: string }).threshold);
      const m = EXPR.exec(expression.trim());
      if (!m) problems.push(`threshold ${key}: cannot parse ${JSON.stringify(expression)}`);
      else thresholds.push({ key, metric, tags, expression, agg: m[1], op: m[3], bound: Number(m[4]) });
    }
  }
  if (problems.length > 0) throw new Error(`invalid options: ${problems.join('; ')}`);

  const setupData = typeof script.setup === 'function' ? script.setup() : undefined;
  const data = setupData === undefined ? undefined : JSON.parse(JSON.stringify(setupData));
  for (const sc of scenarios) {
    ctx.scenario = sc.name;
    ctx.vu = 1;
    g.__VU = 1;
    for (let i = 0; i < sc.iterations; i++) {
      ctx.iterationInTest = i;
      g.__ITER = i;
      script[sc.exec](data);
      rec.add('iterations', 1, { scenario: sc.name });
    }
  }
  ctx.vu = 0;
  g.__VU = 0;
  if (typeof script.teardown === 'function') script.teardown(data);

  const http = rec.samples.filter((s) => s.metric === 'http_reqs');
  const custom: RunSummary['custom_metrics'] = {};
  for (const [name, type] of rec.customMetrics) custom[name] = { type, samples: rec.samples.filter((s) => s.metric === name).length };
  return {
    script: path.basename(scriptPath),
    scenarios,
    checks: [...rec.checks.values()],
    requests: http.length,
    failed_requests: rec.samples
      .filter((s) => s.metric === 'http_req_failed' && s.value === 1)
      .map((s) => ({ name: s.tags.name, method: s.tags.method, status: s.tags.status })),
    custom_metrics: custom,
    thresholds: thresholds.map((t) => {
      const type = rec.customMetrics.get(t.metric) ?? (t.metric === 'http_reqs' || t.metric === 'iterations' ? 'counter' : 'trend');
      const values = rec.samples
        .filter((s) => s.metric === t.metric && Object.entries(t.tags).every(([k, v]) => s.tags[k] === v))
        .map((s) => s.value);
      const value = aggregate(values, t.agg, type);
      return { metric: t.key, expression: t.expression, value, ok: value === null ? null : compare(value, t.op, t.bound) };
    }),
    problems,
  };
}

if (require.main === module) {
  const [scriptPath, envJson] = process.argv.slice(2);
  // stdout carries only the summary line; the scripts' console.log goes to stderr.
  console.log = (...args: unknown[]) => process.stderr.write(`${args.map(String).join(' ')}\n`);
  try {
    const summary = runScript(scriptPath, JSON.parse(envJson ?? '{}') as Record<string, string>);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}
