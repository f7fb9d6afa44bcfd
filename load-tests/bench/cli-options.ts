/**
 * Command-line flags of bench-throughput: the --help text, the Options they parse into (with
 * their defaults and bounds) and UsageError for bad flags (exit code 2).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RESULTS_DIR } from './paths';

export const HELP = `bench-throughput: throughput, dispatch lag and scheduling accuracy of the scheduler

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
  --scenarios LIST        comma list of throughput,paced,scheduled,workflow (default the first three)
  --dag-layers N          workflow scenario: layers of the DAG (default 100)
  --dag-width N           workflow scenario: tasks per layer (default 100)
  --dag-fan-in N          workflow scenario: dependencies of each task on the layer before (default 2)
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

export interface Options {
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
  dagLayers: number;
  dagWidth: number;
  dagFanIn: number;
}

export class UsageError extends Error {}

export function parseOptions(argv: string[]): Options | null {
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
      'dag-layers': { type: 'string' },
      'dag-width': { type: 'string' },
      'dag-fan-in': { type: 'string' },
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
    if (!['throughput', 'paced', 'scheduled', 'workflow'].includes(s)) throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(s)}`);
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
    dagLayers: Math.floor(num('dag-layers', values['dag-layers'], 100, 1, 10_000)),
    dagWidth: Math.floor(num('dag-width', values['dag-width'], 100, 1, 10_000)),
    dagFanIn: Math.floor(num('dag-fan-in', values['dag-fan-in'], 2, 1, 10_000)),
  };
}
