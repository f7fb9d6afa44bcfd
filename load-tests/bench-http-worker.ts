/**
 * Tasks per second through the HTTP pull-worker path (`createWorker` in processes of a separate
 * application, leasing over HTTP), with 1 and with 4 worker processes, beside the built-in worker
 * processes' rate in the same run on the same service.
 *
 * Starts the real service (`node dist/src/main.js`, embedded SQLite in a temp dir) with a pull queue
 * `bench` (`externalQueues`, `transport: "http"`), makes the application of test/fixtures/pull-worker-app
 * in a temp dir (depending on this package by path), then for each phase submits `--tasks` noop
 * tasks in batches of 1,000 and times first submit → all SUCCEEDED (read from /metrics every 100 ms):
 *   builtin   tasks of the default queue, run by the service's own worker processes;
 *   http-N    tasks of queue `bench`, run by N processes of `worker.mjs` (`--concurrency` each),
 *             started and polling before the first submit.
 * Prints one JSON object to stdout and a table to stderr. Speed is reported, never asserted.
 *
 * Usage: npm run build && node dist/load-tests/bench-http-worker.js [--tasks 5000] [--concurrency 32] [--workers 1,4]
 */
import { performance } from 'node:perf_hooks';
import { http } from '../test/helpers/http';
import { makePullWorkerProject, startPullWorker, WorkerProcess } from '../test/helpers/pull-worker-project';
import { serviceConfigEnv } from '../test/helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../test/helpers/service-process';
import { tempDir } from '../test/helpers/temp-dir';

interface Options {
  tasks: number;
  concurrency: number;
  workers: number[];
}

interface PhaseResult {
  phase: string;
  tasks: number;
  seconds: number;
  tasks_per_s: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { tasks: 5000, concurrency: 32, workers: [1, 4] };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--tasks') o.tasks = Number(value);
    else if (flag === '--concurrency') o.concurrency = Number(value);
    else if (flag === '--workers') o.workers = value.split(',').map(Number);
    else throw new Error(`unknown flag ${flag} (--tasks N, --concurrency N, --workers 1,4)`);
  }
  if (!(o.tasks > 0) || !(o.concurrency > 0) || o.workers.some((n) => !(n > 0))) throw new Error('flags must be positive numbers');
  return o;
}

/** SUCCEEDED tasks so far, all types, from the service's completion counter. */
async function succeeded(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`);
  let sum = 0;
  for (const line of (await res.text()).split('\n'))
    if (line.startsWith('scheduler_tasks_completed_total{') && line.includes('status="SUCCEEDED"')) sum += Number(line.split(' ').pop());
  return sum;
}

/** Submits `n` noop tasks of `queue` (undefined: the default queue) and times first submit → all SUCCEEDED. */
async function phase(svc: ServiceProcess, name: string, n: number, queue: string | undefined): Promise<PhaseResult> {
  const before = await succeeded(svc.url);
  const t0 = performance.now();
  for (let sent = 0; sent < n; sent += 1000) {
    const size = Math.min(1000, n - sent);
    const tasks = Array.from({ length: size }, () => ({ task_type: 'noop', ...(queue ? { queue } : {}) }));
    const res = await http('POST', `${svc.url}/api/v1/tasks/batch`, { tasks });
    if (res.status !== 202) throw new Error(`batch answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  let last = before;
  let lastMove = performance.now();
  for (;;) {
    const now = await succeeded(svc.url);
    if (now - before >= n) break;
    if (now !== last) [last, lastMove] = [now, performance.now()];
    else if (performance.now() - lastMove > 60_000) throw new Error(`${name}: stalled at ${now - before}/${n}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t0) / 1000;
  return { phase: name, tasks: n, seconds: Math.round(seconds * 100) / 100, tasks_per_s: Math.round(n / seconds) };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const data = tempDir('bench-http-worker-');
  const app = tempDir('bench-http-app-');
  let svc: ServiceProcess | null = null;
  const workers: WorkerProcess[] = [];
  try {
    const env = serviceConfigEnv(data.path, { externalQueues: { bench: { transport: 'http', leaseMs: 30_000, maxInFlight: 1000 } } });
    svc = await startServiceProcess(data.path, { ...env, NODE_ENV: 'production' }, 60_000);
    const installed = await makePullWorkerProject(app.path);
    const results: PhaseResult[] = [await phase(svc, 'builtin', options.tasks, undefined)];
    for (const n of options.workers) {
      const started = Array.from({ length: n }, () =>
        startPullWorker(app.path, { SCHEDULER_URL: svc!.url, QUEUE: 'bench', CONCURRENCY: String(options.concurrency) }),
      );
      workers.push(...started);
      await Promise.all(started.map((w) => w.ready));
      results.push(await phase(svc, `http-${n}`, options.tasks, 'bench'));
      await Promise.all(started.map((w) => w.stop()));
    }
    process.stdout.write(`${JSON.stringify({ bench: 'http-worker', installed, ...options, results }, null, 2)}\n`);
    for (const r of results)
      process.stderr.write(`${r.phase.padEnd(10)} ${String(r.tasks).padStart(7)} tasks ${String(r.tasks_per_s).padStart(7)} tasks/s\n`);
  } finally {
    await Promise.all(workers.map((w) => w.kill9()));
    await svc?.stop();
    data.remove();
    app.remove();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench-http-worker failed: ${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  },
);
