/**
 * Throughput / dispatch-lag / scheduling-accuracy benchmark for the scheduler service.
 *
 * Starts the real service (`node dist/src/main.js`) as a child process on a free port with a fresh
 * temporary SQLite file, waits for /readyz, runs three scenarios and prints one JSON object with
 * every figure to stdout (a short table goes to stderr). The JSON is also written to
 * `load-tests/results/latest.json`.
 *
 *   a. throughput: N `noop` tasks in batches of 1,000, `--concurrency` requests in flight;
 *      submit rate, end-to-end completion rate (first submit → all SUCCEEDED, read from /metrics
 *      every `--poll-ms`), dispatch lag of a sample (GET started_at − due_at), peak RSS.
 *   b. paced: single-task submissions at `--rate`/s for `--paced-seconds` s, sent at their slot
 *      times (one send burst per 10 ms tick); dispatch-lag distribution of those tasks.
 *   c. scheduled: `--scheduled-count` tasks all scheduled at now + `--scheduled-delay-ms`;
 *      how late they started relative to scheduled_at, and whether any started early.
 *
 * Usage: npm run build && node dist/load-tests/bench-throughput.js [--tasks 50000] [--help]
 *
 * Everything is bounded by `--timeout` (seconds); the service is stopped (SIGTERM, SIGKILL after
 * 10 s, then any surviving worker process it forked) and the temp dir removed in all cases.
 * Speed is reported, never asserted (DESIGN §13): the exit code is 0 when every scenario ran to
 * the end, 1 when one failed, 2 on bad arguments.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const ROOT = path.resolve(__dirname, '..', '..');
const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
const RESULTS_DIR = path.join(ROOT, 'load-tests', 'results');

const HELP = `bench-throughput: throughput, dispatch lag and scheduling accuracy of the scheduler

  --tasks N               throughput scenario: number of noop tasks (default 50000)
  --batch-size N          tasks per batch request (default 1000, the API maximum)
  --concurrency N         batch requests in flight (default 4)
  --lag-sample N          tasks fetched with GET for the throughput lag figures (default 2000;
                          all when --tasks is smaller)
  --paced-seconds S       paced scenario duration (default 10)
  --rate R                paced scenario submissions per second (default 1000)
  --paced-lag-sample N    tasks fetched for the paced lag figures (default 10000 = all at defaults)
  --scheduled-count N     scheduled-accuracy scenario: tasks (default 200)
  --scheduled-delay-ms MS scheduled_at = now + MS (default 2000)
  --scenarios LIST        comma list of throughput,paced,scheduled (default all three)
  --poll-ms MS            /metrics polling interval while waiting for completions (default 100)
  --timeout S             overall time bound in seconds (default 300)
  --workers N             WORKERS for the service (default: the service's config)
  --worker-concurrency N  WORKER_CONCURRENCY (default: the service's config)
  --partitions N          PARTITIONS (default: the service's config)
  --log-level L           LOG_LEVEL (default: info)
  --cpu-prof DIR          run the service with --cpu-prof --cpu-prof-dir=DIR (profiles are written
                          when it exits after SIGTERM)
  --out FILE              results file (default load-tests/results/latest.json)
  --keep-tmp              keep the temp dir (database + service log) for inspection
  --help                  this text
`;

interface Options {
  tasks: number;
  batchSize: number;
  concurrency: number;
  lagSample: number;
  pacedSeconds: number;
  rate: number;
  pacedLagSample: number;
  scheduledCount: number;
  scheduledDelayMs: number;
  scenarios: Set<string>;
  pollMs: number;
  timeoutS: number;
  workers: number | null;
  workerConcurrency: number | null;
  partitions: number | null;
  logLevel: string;
  cpuProfDir: string | null;
  out: string;
  keepTmp: boolean;
}

class UsageError extends Error {}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      tasks: { type: 'string' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      'lag-sample': { type: 'string' },
      'paced-seconds': { type: 'string' },
      rate: { type: 'string' },
      'paced-lag-sample': { type: 'string' },
      'scheduled-count': { type: 'string' },
      'scheduled-delay-ms': { type: 'string' },
      scenarios: { type: 'string' },
      'poll-ms': { type: 'string' },
      timeout: { type: 'string' },
      workers: { type: 'string' },
      'worker-concurrency': { type: 'string' },
      partitions: { type: 'string' },
      'log-level': { type: 'string' },
      'cpu-prof': { type: 'string' },
      out: { type: 'string' },
      'keep-tmp': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return null;
  const num = (name: string, raw: string | undefined, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be a number in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    return n;
  };
  const intOrNull = (name: string, raw: string | undefined, min: number, max: number): number | null =>
    raw === undefined ? null : Math.floor(num(name, raw, 0, min, max));
  const scenarios = new Set((values.scenarios ?? 'throughput,paced,scheduled').split(',').map((s) => s.trim()).filter(Boolean));
  for (const s of scenarios) {
    if (!['throughput', 'paced', 'scheduled'].includes(s)) throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(s)}`);
  }
  return {
    tasks: Math.floor(num('tasks', values.tasks, 50_000, 1, 10_000_000)),
    batchSize: Math.floor(num('batch-size', values['batch-size'], 1000, 1, 1000)),
    concurrency: Math.floor(num('concurrency', values.concurrency, 4, 1, 256)),
    lagSample: Math.floor(num('lag-sample', values['lag-sample'], 2000, 1)),
    pacedSeconds: num('paced-seconds', values['paced-seconds'], 10, 0.1, 3600),
    rate: num('rate', values.rate, 1000, 1, 100_000),
    pacedLagSample: Math.floor(num('paced-lag-sample', values['paced-lag-sample'], 10_000, 1)),
    scheduledCount: Math.floor(num('scheduled-count', values['scheduled-count'], 200, 1, 1000)),
    scheduledDelayMs: Math.floor(num('scheduled-delay-ms', values['scheduled-delay-ms'], 2000, 100, 600_000)),
    scenarios,
    pollMs: Math.floor(num('poll-ms', values['poll-ms'], 100, 10, 10_000)),
    timeoutS: num('timeout', values.timeout, 300, 1, 24 * 3600),
    workers: intOrNull('workers', values.workers, 1, 64),
    workerConcurrency: intOrNull('worker-concurrency', values['worker-concurrency'], 1, 10_000),
    partitions: intOrNull('partitions', values.partitions, 1, 4096),
    logLevel: values['log-level'] ?? 'info',
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    out: path.resolve(values.out ?? path.join(RESULTS_DIR, 'latest.json')),
    keepTmp: values['keep-tmp'] ?? false,
  };
}

// ---------------------------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------------------------

/** Aborted on overall timeout, service death or a signal; every wait and request observes it. */
const run = new AbortController();
setMaxListeners(1_000_000, run.signal); // one listener per in-flight request

function abortReason(): Error {
  const r: unknown = run.signal.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}

function checkAborted(): void {
  if (run.signal.aborted) throw abortReason();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (run.signal.aborted) return reject(abortReason());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason());
    };
    const timer = setTimeout(() => {
      run.signal.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    run.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

const round = (n: number | null, digits = 1): number | null => (n === null || !Number.isFinite(n) ? null : Number(n.toFixed(digits)));

interface Distribution {
  count: number;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  min_ms: number | null;
  mean_ms: number | null;
}

function distribution(values: number[]): Distribution {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : null;
  return {
    count: s.length,
    p50_ms: round(percentile(s, 0.5)),
    p90_ms: round(percentile(s, 0.9)),
    p99_ms: round(percentile(s, 0.99)),
    max_ms: round(s.length ? s[s.length - 1] : null),
    min_ms: round(s.length ? s[0] : null),
    mean_ms: round(mean),
  };
}

/** k distinct random elements (all of them when k ≥ length), partial Fisher–Yates. */
function sample<T>(items: T[], k: number): T[] {
  const a = [...items];
  const n = Math.min(k, a.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (a.length - i));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, n);
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(lanes);
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') return reject(new Error('no port'));
      const port = addr.port;
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP client (node:http with a keep-alive agent: cheaper per request than fetch, and the
// harness shares the machine's cores with the service)
// ---------------------------------------------------------------------------------------------

interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

class HttpClient {
  readonly agent: http.Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
  }

  request(method: string, urlPath: string, body?: string, timeoutMs = 30_000): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = http.request(
        { host: this.host, port: this.port, method, path: urlPath, headers, agent: this.agent, signal: run.signal },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(run.signal.aborted ? abortReason() : err));
      req.end(body);
    });
  }

  /** GET with one retry on a connection error (a keep-alive socket the server just closed). */
  async get(urlPath: string, timeoutMs = 30_000): Promise<HttpResult> {
    try {
      return await this.request('GET', urlPath, undefined, timeoutMs);
    } catch (err) {
      checkAborted();
      return this.request('GET', urlPath, undefined, timeoutMs);
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// /metrics parsing
// ---------------------------------------------------------------------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE_RE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[2]) for (const l of m[2].matchAll(LABEL_RE)) labels[l[1]] = l[2];
    const value = m[3] === '+Inf' ? Infinity : Number(m[3]);
    out.push({ name: m[1], labels, value });
  }
  return out;
}

function metricValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'] as const;
type Terminal = (typeof TERMINAL)[number];
type TerminalCounts = Record<Terminal, number>;

interface MetricsSnapshot {
  at: number; // performance.now() when the scrape answer arrived
  completed: TerminalCounts; // noop tasks by terminal state
  depth: Record<string, number>; // scheduler_tasks{state}
  lagBuckets: Map<number, number>; // scheduler_dispatch_lag_seconds_bucket by le (cumulative)
  lagCount: number;
  scrapeMs: number;
}

async function scrape(client: HttpClient): Promise<MetricsSnapshot> {
  const t0 = performance.now();
  const res = await client.get('/metrics', 10_000);
  const at = performance.now();
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const samples = parseMetrics(res.body);
  const completed = {} as TerminalCounts;
  for (const st of TERMINAL) completed[st] = metricValue(samples, 'scheduler_tasks_completed_total', { task_type: 'noop', status: st });
  const depth: Record<string, number> = {};
  for (const s of samples) if (s.name === 'scheduler_tasks' && s.labels.state) depth[s.labels.state] = s.value;
  const lagBuckets = new Map<number, number>();
  for (const s of samples) {
    if (s.name === 'scheduler_dispatch_lag_seconds_bucket' && s.labels.le !== undefined) {
      lagBuckets.set(s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value);
    }
  }
  return { at, completed, depth, lagBuckets, lagCount: metricValue(samples, 'scheduler_dispatch_lag_seconds_count'), scrapeMs: at - t0 };
}

/**
 * Quantiles of the service's own dispatch-lag histogram between two scrapes (every attempt that
 * started in between, including other scenarios' stragglers): the upper bound of the bucket that
 * holds the quantile, in ms.
 */
function histogramDelta(before: MetricsSnapshot, after: MetricsSnapshot): { count: number; p50_le_ms: number | null; p99_le_ms: number | null; max_le_ms: number | null } {
  const les = [...after.lagBuckets.keys()].sort((a, b) => a - b);
  const delta = les.map((le) => ({ le, n: (after.lagBuckets.get(le) ?? 0) - (before.lagBuckets.get(le) ?? 0) }));
  const count = after.lagCount - before.lagCount;
  const q = (p: number): number | null => {
    if (count <= 0) return null;
    const want = p * count;
    for (const d of delta) if (d.n >= want) return Number.isFinite(d.le) ? d.le * 1000 : null;
    return null;
  };
  let maxLe: number | null = null;
  for (const d of delta) {
    if (d.n >= count && count > 0) {
      maxLe = Number.isFinite(d.le) ? d.le * 1000 : null;
      break;
    }
  }
  return { count, p50_le_ms: q(0.5), p99_le_ms: q(0.99), max_le_ms: maxLe };
}

const sumCounts = (c: TerminalCounts): number => TERMINAL.reduce((a, s) => a + c[s], 0);
const diffCounts = (a: TerminalCounts, b: TerminalCounts): TerminalCounts => {
  const out = {} as TerminalCounts;
  for (const s of TERMINAL) out[s] = a[s] - b[s];
  return out;
};

interface CompletionWait {
  done_at: number; // performance.now() of the scrape that saw every task terminal
  counts: TerminalCounts; // since the baseline
  polls: number;
  max_pending: number;
  max_scrape_ms: number;
  timeline: Array<{ t_s: number; terminal: number; pending: number }>;
  last: MetricsSnapshot;
}

/**
 * Polls /metrics every `pollMs` until `expected` more noop tasks than in `baseline` are terminal.
 * Fails when nothing moves for `stallMs`. The completion instant is the arrival of the scrape that
 * first saw them all (so it is late by at most one poll interval plus one scrape).
 */
async function waitForCompletions(
  client: HttpClient,
  baseline: MetricsSnapshot,
  expected: number,
  pollMs: number,
  origin: number,
  stallMs = 30_000,
  cancel: { cancelled: boolean } = { cancelled: false },
): Promise<CompletionWait> {
  let polls = 0;
  let maxPending = 0;
  let maxScrape = 0;
  let lastProgress = performance.now();
  let lastTerminal = -1;
  let lastTimelineAt = -Infinity;
  const timeline: CompletionWait['timeline'] = [];
  for (;;) {
    checkAborted();
    if (cancel.cancelled) throw new Error('completion wait cancelled');
    const started = performance.now();
    const snap = await scrape(client);
    polls++;
    maxScrape = Math.max(maxScrape, snap.scrapeMs);
    const pending = snap.depth.PENDING ?? 0;
    maxPending = Math.max(maxPending, pending);
    const counts = diffCounts(snap.completed, baseline.completed);
    const terminal = sumCounts(counts);
    if (snap.at - lastTimelineAt >= 1000 || terminal >= expected) {
      timeline.push({ t_s: round((snap.at - origin) / 1000, 2) as number, terminal, pending });
      lastTimelineAt = snap.at;
    }
    if (terminal >= expected) {
      return { done_at: snap.at, counts, polls, max_pending: maxPending, max_scrape_ms: round(maxScrape) as number, timeline, last: snap };
    }
    if (terminal !== lastTerminal) {
      lastTerminal = terminal;
      lastProgress = snap.at;
    } else if (snap.at - lastProgress > stallMs) {
      throw new Error(`no completions for ${stallMs / 1000} s: ${terminal}/${expected} terminal (${JSON.stringify(counts)}), depth ${JSON.stringify(snap.depth)}`);
    }
    await sleep(pollMs - (performance.now() - started));
  }
}

// ---------------------------------------------------------------------------------------------
// Process tree: RSS and CPU of the service and its forked workers, from /proc
// ---------------------------------------------------------------------------------------------

const CLK_TCK = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  state: string; // R, S, D, Z, ...
  ppid: number;
  cpuTicks: number; // utime + stime
  startTime: number; // since boot, in ticks: identifies the process (pids get reused)
}

function readStat(pid: number): ProcStat | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from #3 (state) on
    return { state: f[0], ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]), startTime: Number(f[19]) };
  } catch {
    return null;
  }
}

function readMem(pid: number): { rssKb: number; hwmKb: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)/m.exec(s);
    const hwm = /^VmHWM:\s+(\d+)/m.exec(s);
    if (!rss || !hwm) return null;
    return { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) };
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const txt = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        if (txt) for (const c of txt.split(/\s+/)) out.push(Number(c));
      } catch {
        /* thread gone */
      }
    }
  } catch {
    /* process gone */
  }
  return out;
}

function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const stack = childrenOf(pid);
  while (stack.length) {
    const p = stack.pop() as number;
    out.push(p);
    stack.push(...childrenOf(p));
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

interface PhaseResources {
  main_peak_rss_mb: number;
  total_peak_rss_mb: number; // max over samples of Σ VmRSS (main + workers)
  workers_peak_rss_mb: number; // max over samples of Σ VmRSS (workers)
  main_cpu_s: number;
  workers_cpu_s: number;
  harness_cpu_s: number;
  wall_s: number;
  samples: number;
}

/** Samples the service tree every `intervalMs`; keeps overall and per-phase peaks. */
class TreeSampler {
  private timer: NodeJS.Timeout | null = null;
  /** Every process seen in the tree: pid → start time (to kill survivors safely). */
  readonly seen = new Map<number, { startTime: number; cmd: string }>();
  private overall = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
  private phase = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
  private phaseStart = { wall: 0, mainTicks: 0, workerTicks: new Map<number, number>(), harness: process.cpuUsage() };
  lastWorkerPids: number[] = [];

  constructor(readonly pid: number) {}

  start(intervalMs = 200): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  tick(): void {
    const main = readMem(this.pid);
    if (!main) return;
    const kids = descendantsOf(this.pid);
    this.lastWorkerPids = kids;
    let workers = 0;
    for (const k of kids) {
      if (!this.seen.has(k)) {
        const st = readStat(k);
        if (st) this.seen.set(k, { startTime: st.startTime, cmd: cmdline(k) });
      }
      workers += readMem(k)?.rssKb ?? 0;
    }
    for (const acc of [this.overall, this.phase]) {
      acc.mainRss = Math.max(acc.mainRss, main.rssKb, acc === this.overall ? main.hwmKb : 0);
      acc.workersRss = Math.max(acc.workersRss, workers);
      acc.totalRss = Math.max(acc.totalRss, main.rssKb + workers);
      acc.samples++;
    }
  }

  beginPhase(): void {
    this.tick();
    this.phase = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
    const wt = new Map<number, number>();
    for (const k of descendantsOf(this.pid)) wt.set(k, readStat(k)?.cpuTicks ?? 0);
    this.phaseStart = { wall: performance.now(), mainTicks: readStat(this.pid)?.cpuTicks ?? 0, workerTicks: wt, harness: process.cpuUsage() };
    this.tick();
  }

  endPhase(): PhaseResources {
    this.tick();
    const mainTicks = (readStat(this.pid)?.cpuTicks ?? 0) - this.phaseStart.mainTicks;
    let workerTicks = 0;
    for (const k of descendantsOf(this.pid)) workerTicks += (readStat(k)?.cpuTicks ?? 0) - (this.phaseStart.workerTicks.get(k) ?? 0);
    const h = process.cpuUsage(this.phaseStart.harness);
    const mb = (kb: number) => round(kb / 1024) as number;
    return {
      main_peak_rss_mb: mb(this.phase.mainRss),
      workers_peak_rss_mb: mb(this.phase.workersRss),
      total_peak_rss_mb: mb(this.phase.totalRss),
      main_cpu_s: round(mainTicks / CLK_TCK, 2) as number,
      workers_cpu_s: round(workerTicks / CLK_TCK, 2) as number,
      harness_cpu_s: round((h.user + h.system) / 1e6, 2) as number,
      wall_s: round((performance.now() - this.phaseStart.wall) / 1000, 2) as number,
      samples: this.phase.samples,
    };
  }

  overallPeaks(): { main_peak_rss_mb: number; workers_peak_rss_mb: number; total_peak_rss_mb: number; main_vmhwm_mb: number | null; workers_vmhwm_sum_mb: number; worker_processes: number } {
    this.tick();
    const mb = (kb: number) => round(kb / 1024) as number;
    const kids = descendantsOf(this.pid);
    return {
      main_peak_rss_mb: mb(this.overall.mainRss),
      workers_peak_rss_mb: mb(this.overall.workersRss),
      total_peak_rss_mb: mb(this.overall.totalRss),
      main_vmhwm_mb: readMem(this.pid) ? mb((readMem(this.pid) as { hwmKb: number }).hwmKb) : null,
      workers_vmhwm_sum_mb: mb(kids.reduce((a, k) => a + (readMem(k)?.hwmKb ?? 0), 0)),
      worker_processes: kids.length,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// The service under test
// ---------------------------------------------------------------------------------------------

class Service {
  child: ChildProcess | null = null;
  sampler: TreeSampler | null = null;
  exited: Promise<void> = Promise.resolve();
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private logFd: number | null = null;
  stopping = false;

  constructor(
    readonly tmpDir: string,
    readonly port: number,
    readonly opts: Options,
  ) {}

  get logPath(): string {
    return path.join(this.tmpDir, 'service.log');
  }

  start(): void {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(this.port),
      HOST: '127.0.0.1',
      SQLITE_PATH: path.join(this.tmpDir, 'scheduler.db'),
      LOG_LEVEL: this.opts.logLevel,
    };
    delete env.NODE_ENV;
    if (this.opts.workers !== null) env.WORKERS = String(this.opts.workers);
    if (this.opts.workerConcurrency !== null) env.WORKER_CONCURRENCY = String(this.opts.workerConcurrency);
    if (this.opts.partitions !== null) env.PARTITIONS = String(this.opts.partitions);
    const nodeArgs: string[] = [];
    if (this.opts.cpuProfDir) {
      fs.mkdirSync(this.opts.cpuProfDir, { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${this.opts.cpuProfDir}`);
    }
    this.logFd = fs.openSync(this.logPath, 'a');
    const child = spawn(process.execPath, [...nodeArgs, SERVICE_ENTRY], {
      cwd: ROOT,
      env,
      stdio: ['ignore', this.logFd, this.logFd],
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        if (!this.stopping) run.abort(new Error(`service exited unexpectedly (code ${code}, signal ${signal}); log: ${this.logTail(15)}`));
        resolve();
      });
      child.once('error', (err) => {
        this.exitInfo = { code: null, signal: null };
        run.abort(new Error(`service could not start: ${err.message}`));
        resolve();
      });
    });
    if (child.pid !== undefined) {
      this.sampler = new TreeSampler(child.pid);
      this.sampler.start(200);
    }
  }

  async waitReady(client: HttpClient, timeoutMs = 60_000): Promise<number> {
    const t0 = performance.now();
    for (;;) {
      checkAborted();
      try {
        const res = await client.request('GET', '/readyz', undefined, 2000);
        if (res.status === 200) return performance.now() - t0;
      } catch (err) {
        checkAborted();
      }
      if (performance.now() - t0 > timeoutMs) throw new Error(`service not ready within ${timeoutMs / 1000} s; log: ${this.logTail(15)}`);
      await sleep(100);
    }
  }

  logTail(lines: number): string {
    try {
      const txt = fs.readFileSync(this.logPath, 'utf8').trimEnd().split('\n');
      return txt.slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM, SIGKILL after `graceMs`; then SIGKILL any forked worker that outlived it. */
  async stop(graceMs = 10_000): Promise<{ graceful: boolean; exit: Service['exitInfo']; killed_orphans: number }> {
    this.stopping = true;
    const child = this.child;
    let graceful = true;
    if (child && this.exitInfo === null) {
      this.sampler?.tick(); // remember the current workers
      child.kill('SIGTERM');
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
      ]);
      if (timedOut) {
        graceful = false;
        child.kill('SIGKILL');
        await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      }
    }
    this.sampler?.stop();
    // Forked workers normally exit right after the service; give them a moment before SIGKILL.
    for (let waited = 0; waited < 3000 && this.survivors().length > 0; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const killed = this.killOrphans();
    if (this.logFd !== null) {
      fs.closeSync(this.logFd);
      this.logFd = null;
    }
    return { graceful, exit: this.exitInfo, killed_orphans: killed };
  }

  /** Synchronous last resort (hard timeout): SIGKILL the service and its workers. */
  killNow(): void {
    this.stopping = true;
    try {
      if (this.child && this.exitInfo === null) this.child.kill('SIGKILL');
    } catch {
      /* gone */
    }
    this.killOrphans();
  }

  /** Processes this service forked that are still alive (same pid and start time, not zombies). */
  private survivors(): number[] {
    const out: number[] = [];
    for (const [pid, info] of this.sampler?.seen ?? []) {
      const st = readStat(pid);
      if (st && st.startTime === info.startTime && st.state !== 'Z') out.push(pid);
    }
    return out;
  }

  /** SIGKILL the survivors; returns how many were killed. */
  private killOrphans(): number {
    let n = 0;
    for (const pid of this.survivors()) {
      try {
        process.kill(pid, 'SIGKILL');
        n++;
      } catch {
        /* gone */
      }
    }
    return n;
  }
}

// ---------------------------------------------------------------------------------------------
// Lag from the tasks themselves
// ---------------------------------------------------------------------------------------------

interface TaskView {
  task_id: string;
  status: string;
  scheduled_at: string | null;
  due_at: string | null;
  started_at: string | null;
  created_at: string;
  completed_at: string | null;
}

async function fetchTasks(client: HttpClient, ids: string[], concurrency = 8): Promise<TaskView[]> {
  return mapLimit(ids, concurrency, async (id) => {
    const res = await client.get(`/api/v1/tasks/${encodeURIComponent(id)}`);
    if (res.status !== 200) throw new Error(`GET /api/v1/tasks/${id}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    return JSON.parse(res.body) as TaskView;
  });
}

interface LagReport extends Distribution {
  sampled_of: number;
  not_succeeded: number;
  started_before_due: number;
}

/** Dispatch lag = started_at − due_at (ms) over the fetched tasks. */
function lagReport(tasks: TaskView[], of: number): LagReport {
  const lags: number[] = [];
  let notOk = 0;
  let early = 0;
  for (const t of tasks) {
    if (t.status !== 'SUCCEEDED') notOk++;
    if (!t.started_at || !t.due_at) continue;
    const lag = Date.parse(t.started_at) - Date.parse(t.due_at);
    if (lag < 0) early++;
    lags.push(lag);
  }
  return { ...distribution(lags), sampled_of: of, not_succeeded: notOk, started_before_due: early };
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

interface SubmitAck {
  task_id: string;
  status: string;
}

/** Retry-After (seconds) of a 429/503, capped; a default when absent. */
function retryAfterMs(res: HttpResult): number {
  const ra = Number(res.headers['retry-after']);
  return Number.isFinite(ra) && ra >= 0 ? Math.min(ra * 1000, 5000) : 250;
}

async function throughputScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const n = opts.tasks;
  const nBatches = Math.ceil(n / opts.batchSize);
  const bodyOf = (size: number) => JSON.stringify({ tasks: Array.from({ length: size }, () => ({ task_type: 'noop' })) });
  const fullBody = bodyOf(opts.batchSize);
  const lastSize = n - (nBatches - 1) * opts.batchSize;
  const lastBody = lastSize === opts.batchSize ? fullBody : bodyOf(lastSize);

  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();

  const ids: string[] = [];
  const reqLat: number[] = [];
  let throttled = 0;
  let next = 0;
  const t0 = performance.now();
  let lastAck = t0;

  // Completion poller runs from the first submit (its cost is part of what is measured).
  const cancel = { cancelled: false };
  const waiting = waitForCompletions(client, baseline, n, opts.pollMs, t0, 30_000, cancel);
  waiting.catch(() => undefined); // observed below

  const lanes = Array.from({ length: Math.min(opts.concurrency, nBatches) }, async () => {
    for (;;) {
      checkAborted();
      if (cancel.cancelled) return;
      const i = next++;
      if (i >= nBatches) return;
      const body = i === nBatches - 1 ? lastBody : fullBody;
      for (let tries = 0; ; tries++) {
        const s = performance.now();
        const res = await client.request('POST', '/api/v1/tasks/batch', body, 60_000);
        if (res.status === 202) {
          const e = performance.now();
          reqLat.push(e - s);
          lastAck = Math.max(lastAck, e);
          for (const t of (JSON.parse(res.body) as { tasks: SubmitAck[] }).tasks) ids.push(t.task_id);
          break;
        }
        if ((res.status === 429 || res.status === 503) && tries < 100) {
          throttled++;
          await sleep(retryAfterMs(res));
          continue;
        }
        cancel.cancelled = true;
        throw new Error(`POST /api/v1/tasks/batch: HTTP ${res.status} ${res.body.slice(0, 300)}`);
      }
    }
  });
  try {
    await Promise.all(lanes);
  } catch (err) {
    cancel.cancelled = true;
    throw err;
  }
  const submitS = (lastAck - t0) / 1000;
  if (ids.length !== n) throw new Error(`acknowledged ${ids.length} task ids, expected ${n}`);

  const wait = await waiting;
  const e2eS = (wait.done_at - t0) / 1000;
  const resources = sampler.endPhase();

  const lagStart = performance.now();
  const fetched = await fetchTasks(client, sample(ids, opts.lagSample));
  const lag = lagReport(fetched, n);
  const end = await scrape(client);

  return {
    tasks: n,
    batch_size: opts.batchSize,
    concurrency: opts.concurrency,
    submit: {
      seconds: round(submitS, 3),
      tasks_per_s: round(n / submitS, 0),
      batch_requests: nBatches,
      throttled_responses: throttled,
      batch_latency: distribution(reqLat),
    },
    end_to_end: {
      seconds: round(e2eS, 3),
      tasks_per_s: round(n / e2eS, 0),
      drain_after_last_ack_s: round((wait.done_at - lastAck) / 1000, 3),
      terminal_counts: wait.counts,
      poll_ms: opts.pollMs,
      polls: wait.polls,
      max_scrape_ms: wait.max_scrape_ms,
      max_pending_depth: wait.max_pending,
      timeline: wait.timeline,
    },
    dispatch_lag: lag,
    dispatch_lag_server_histogram: histogramDelta(baseline, end),
    lag_fetch_s: round((performance.now() - lagStart) / 1000, 2),
    resources,
  };
}

async function pacedScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const rate = opts.rate;
  const total = Math.max(1, Math.round(rate * opts.pacedSeconds));
  const interval = 1000 / rate;
  const tickMs = 10;
  const body = JSON.stringify({ task_type: 'noop' });

  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();

  const ids: string[] = [];
  const ackLat: number[] = [];
  const sendLate: number[] = [];
  const errors: string[] = [];
  let throttled = 0;
  let sent = 0;
  let inflight = 0;
  let maxInflight = 0;
  let ticks = 0;
  const pending: Array<Promise<void>> = [];

  const sendOne = async (slot: number): Promise<void> => {
    inflight++;
    maxInflight = Math.max(maxInflight, inflight);
    try {
      for (let tries = 0; ; tries++) {
        const s = performance.now();
        const res = await client.request('POST', '/api/v1/tasks', body, 30_000);
        if (res.status === 202) {
          ackLat.push(performance.now() - s);
          ids.push((JSON.parse(res.body) as SubmitAck).task_id);
          return;
        }
        if ((res.status === 429 || res.status === 503) && tries < 20) {
          throttled++;
          await sleep(retryAfterMs(res));
          continue;
        }
        errors.push(`slot ${slot}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        return;
      }
    } catch (err) {
      errors.push(`slot ${slot}: ${(err as Error).message}`);
    } finally {
      inflight--;
    }
  };

  const t0 = performance.now();
  while (sent < total) {
    checkAborted();
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
    for (; sent < due; sent++) {
      sendLate.push(now - (t0 + sent * interval));
      pending.push(sendOne(sent));
    }
    ticks++;
    if (sent >= total) break;
    const nextTick = t0 + ticks * tickMs;
    await sleep(nextTick - performance.now());
    if (errors.length > 100) throw new Error(`paced: too many failed submissions, e.g. ${errors[0]}`);
  }
  const lastSend = performance.now();
  await Promise.all(pending);
  const lastAck = performance.now();
  checkAborted();
  if (ids.length === 0) throw new Error(`paced: no submission acknowledged, e.g. ${errors[0]}`);

  const wait = await waitForCompletions(client, baseline, ids.length, opts.pollMs, t0, 30_000);
  const resources = sampler.endPhase();
  const fetched = await fetchTasks(client, sample(ids, opts.pacedLagSample));
  const lag = lagReport(fetched, ids.length);
  const end = await scrape(client);
  const sendSpanS = (lastSend - t0) / 1000;

  return {
    target_rate_per_s: rate,
    seconds: opts.pacedSeconds,
    tick_ms: tickMs,
    planned: total,
    acknowledged: ids.length,
    failed_submissions: errors.length,
    first_errors: errors.slice(0, 5),
    throttled_responses: throttled,
    achieved_send_rate_per_s: round(sendSpanS > 0 ? (total - 1) / sendSpanS : total, 0),
    send_lateness_vs_slot: distribution(sendLate),
    ack_latency: distribution(ackLat),
    max_inflight: maxInflight,
    drain_after_last_ack_s: round((wait.done_at - lastAck) / 1000, 3),
    terminal_counts: wait.counts,
    dispatch_lag: lag,
    dispatch_lag_server_histogram: histogramDelta(baseline, end),
    target: { p99_ms: 50, met: lag.p99_ms !== null && lag.p99_ms <= 50 },
    resources,
  };
}

async function scheduledScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const count = opts.scheduledCount;
  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();
  const target = Date.now() + opts.scheduledDelayMs;
  const scheduledAt = new Date(target).toISOString();
  const body = JSON.stringify({ tasks: Array.from({ length: count }, () => ({ task_type: 'noop', scheduled_at: scheduledAt })) });
  const res = await client.request('POST', '/api/v1/tasks/batch', body, 30_000);
  const ackAt = Date.now();
  if (res.status !== 202) throw new Error(`scheduled: POST /api/v1/tasks/batch: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  const acks = (JSON.parse(res.body) as { tasks: SubmitAck[] }).tasks;
  const notScheduled = acks.filter((a) => a.status !== 'SCHEDULED').length;
  const origin = performance.now();
  const wait = await waitForCompletions(client, baseline, count, opts.pollMs, origin, opts.scheduledDelayMs + 30_000);
  const resources = sampler.endPhase();
  const tasks = await fetchTasks(client, acks.map((a) => a.task_id));
  const late: number[] = [];
  let early = 0;
  let dueMismatch = 0;
  let notOk = 0;
  for (const t of tasks) {
    if (t.status !== 'SUCCEEDED') notOk++;
    if (t.due_at && Date.parse(t.due_at) !== target) dueMismatch++;
    if (!t.started_at) continue;
    const l = Date.parse(t.started_at) - target;
    if (l < 0) early++;
    late.push(l);
  }
  const d = distribution(late);
  return {
    tasks: count,
    scheduled_at: scheduledAt,
    delay_ms: opts.scheduledDelayMs,
    ack_before_scheduled_at_ms: target - ackAt,
    acks_not_scheduled: notScheduled,
    not_succeeded: notOk,
    due_at_mismatch: dueMismatch,
    lateness: d,
    started_early: early,
    none_started_early: early === 0,
    terminal_counts: wait.counts,
    resources,
  };
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/** Which code was measured: HEAD and the files changed on top of it (other work in progress). */
function gitInfo(): { commit: string | null; dirty_paths: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src', 'config', 'package.json'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { commit, dirty_paths: status.split('\n').filter(Boolean).map((l) => l.slice(3)) };
  } catch {
    return { commit: null, dirty_paths: [] };
  }
}

function readServiceDefaults(): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'default.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function humanTable(r: Record<string, any>): string {
  const lines: string[] = [];
  const row = (k: string, v: unknown) => lines.push(`  ${k.padEnd(44)} ${v ?? '-'}`);
  lines.push(`bench-throughput  (${r.machine.cpus} cpus, node ${r.machine.node}, workers=${r.service.workers}, worker_concurrency=${r.service.worker_concurrency})`);
  const t = r.throughput;
  if (t?.submit) {
    lines.push(`throughput (${t.tasks} noop, batches of ${t.batch_size}, ${t.concurrency} in flight)`);
    row('submit rate (tasks/s acknowledged)', t.submit.tasks_per_s);
    row('end-to-end rate (tasks/s, all SUCCEEDED)', t.end_to_end.tasks_per_s);
    row('end-to-end time (s)', t.end_to_end.seconds);
    row('dispatch lag p50 / p99 / max (ms)', `${t.dispatch_lag.p50_ms} / ${t.dispatch_lag.p99_ms} / ${t.dispatch_lag.max_ms}  (n=${t.dispatch_lag.count})`);
    row('peak RSS main / total (MB)', `${t.resources.main_peak_rss_mb} / ${t.resources.total_peak_rss_mb}`);
    row('CPU s main / workers / harness', `${t.resources.main_cpu_s} / ${t.resources.workers_cpu_s} / ${t.resources.harness_cpu_s}`);
  } else if (t?.error) lines.push(`throughput: FAILED ${t.error}`);
  const p = r.paced;
  if (p?.dispatch_lag) {
    lines.push(`paced (${p.target_rate_per_s}/s for ${p.seconds} s, single submissions)`);
    row('acknowledged / achieved send rate', `${p.acknowledged} / ${p.achieved_send_rate_per_s}/s`);
    row('ack latency p50 / p99 (ms)', `${p.ack_latency.p50_ms} / ${p.ack_latency.p99_ms}`);
    row('dispatch lag p50 / p99 / max (ms)', `${p.dispatch_lag.p50_ms} / ${p.dispatch_lag.p99_ms} / ${p.dispatch_lag.max_ms}  (n=${p.dispatch_lag.count})`);
    row('target p99 <= 50 ms', p.target.met ? 'met' : 'NOT met');
  } else if (p?.error) lines.push(`paced: FAILED ${p.error}`);
  const s = r.scheduled;
  if (s?.lateness) {
    lines.push(`scheduled (${s.tasks} tasks at now + ${s.delay_ms} ms)`);
    row('lateness p50 / p99 / max (ms)', `${s.lateness.p50_ms} / ${s.lateness.p99_ms} / ${s.lateness.max_ms}`);
    row('started early', s.started_early);
  } else if (s?.error) lines.push(`scheduled: FAILED ${s.error}`);
  if (r.resources) row('overall peak RSS main / total (MB)', `${r.resources.main_peak_rss_mb} / ${r.resources.total_peak_rss_mb}`);
  if (r.errors?.length) lines.push(`errors: ${r.errors.join(' | ')}`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let opts: Options | null;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!fs.existsSync(SERVICE_ENTRY)) {
    process.stderr.write(`${SERVICE_ENTRY} not found: run \`npm run build\` first\n`);
    return 2;
  }
  const o = opts;
  const startedWall = Date.now();
  const timeoutMs = o.timeoutS * 1000;
  const overall = setTimeout(() => run.abort(new Error(`overall timeout of ${o.timeoutS} s reached`)), timeoutMs);
  overall.unref();

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-'));
  const port = await freePort();
  const svc = new Service(tmpDir, port, o);
  const client = new HttpClient('127.0.0.1', port, Math.max(64, o.concurrency * 2));

  const cleanupSync = () => {
    svc.killNow();
    if (!o.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  // Last resort if graceful cleanup itself hangs: 10 s SIGTERM grace + margin after the deadline.
  const hard = setTimeout(() => {
    process.stderr.write('bench-throughput: hard timeout, killing the service\n');
    cleanupSync();
    process.exit(124);
  }, timeoutMs + 25_000);
  hard.unref();
  const onSignal = (sig: NodeJS.Signals) => {
    if (run.signal.aborted) {
      cleanupSync();
      process.exit(130);
    }
    run.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    if (svc.child && svc.exitInfo === null) cleanupSync();
  });

  const defaults = readServiceDefaults();
  const report: Record<string, any> = {
    generated_at: new Date().toISOString(),
    ok: false,
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      total_mem_mb: Math.round(os.totalmem() / 1048576),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    git: gitInfo(),
    service: {
      entry: path.relative(ROOT, SERVICE_ENTRY),
      store: 'sqlite (temp file)',
      workers: o.workers ?? defaults.workers ?? null,
      worker_concurrency: o.workerConcurrency ?? defaults.workerConcurrency ?? null,
      partitions: o.partitions ?? defaults.partitions ?? null,
      log_level: o.logLevel,
      cpu_prof_dir: o.cpuProfDir,
    },
    options: {
      tasks: o.tasks,
      batch_size: o.batchSize,
      concurrency: o.concurrency,
      lag_sample: o.lagSample,
      paced_seconds: o.pacedSeconds,
      rate: o.rate,
      paced_lag_sample: o.pacedLagSample,
      scheduled_count: o.scheduledCount,
      scheduled_delay_ms: o.scheduledDelayMs,
      scenarios: [...o.scenarios],
      poll_ms: o.pollMs,
      timeout_s: o.timeoutS,
    },
    errors: [] as string[],
  };

  let failed = false;
  try {
    svc.start();
    report.service.pid = svc.child?.pid ?? null;
    report.service.ready_after_ms = round(await svc.waitReady(client), 0);
    await sleep(300); // let the workers report in
    report.service.worker_pids = svc.sampler?.lastWorkerPids ?? [];

    const scenarios: Array<[string, (c: HttpClient, s: Service, o: Options) => Promise<Record<string, unknown>>]> = [
      ['throughput', throughputScenario],
      ['paced', pacedScenario],
      ['scheduled', scheduledScenario],
    ];
    for (const [name, fn] of scenarios) {
      if (!o.scenarios.has(name)) continue;
      checkAborted();
      process.stderr.write(`[bench] ${name} ...\n`);
      try {
        report[name] = await fn(client, svc, o);
      } catch (err) {
        failed = true;
        const msg = (err as Error).message;
        report[name] = { error: msg };
        report.errors.push(`${name}: ${msg}`);
        if (run.signal.aborted) break;
      }
      await sleep(500); // a quiet gap between scenarios
    }
  } catch (err) {
    failed = true;
    report.errors.push((err as Error).message);
  } finally {
    if (svc.sampler) report.resources = svc.sampler.overallPeaks();
    client.close();
    try {
      report.service.shutdown = await svc.stop(10_000);
    } catch (err) {
      report.errors.push(`stop: ${(err as Error).message}`);
    }
    if (failed) process.stderr.write(`[bench] service log tail:\n${svc.logTail(30)}\n`);
    if (o.keepTmp) process.stderr.write(`[bench] temp dir kept: ${tmpDir}\n`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
    clearTimeout(overall);
    clearTimeout(hard);
  }

  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  const json = JSON.stringify(report, null, 2);
  fs.mkdirSync(path.dirname(o.out), { recursive: true });
  fs.writeFileSync(o.out, `${json}\n`);
  process.stdout.write(`${json}\n`);
  process.stderr.write(`${humanTable(report)}\n[bench] written to ${path.relative(process.cwd(), o.out) || o.out}\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`bench-throughput failed: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  },
);
