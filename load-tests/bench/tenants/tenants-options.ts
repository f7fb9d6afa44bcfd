/**
 * Command-line flags of bench-tenants: the --help text, the TenantsOptions they parse into (with
 * their defaults and bounds), UsageError for bad flags (exit code 2), and the Options object the
 * shared Service class expects.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Options, parseOptions, UsageError } from '../cli-options';
import { RESULTS_DIR } from '../paths';

export { UsageError };

export const SCENARIOS = ['fairness', 'rate_limit', 'weights'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const TENANTS_HELP = `bench-tenants: fairness between tenants, task-type rate limits and tenant weights

Each scenario runs on its own fresh service (temp SQLite file, the config file below).

  --scenarios LIST        comma list of fairness,rate_limit,weights (default all three)
  --a-tasks N             fairness: tenant A's noop backlog (default 100000)
  --b-interval-ms MS      fairness: tenant B submits one noop task every MS ms (default 10)
  --baseline-seconds S    fairness: how long B runs alone before A starts (default 10)
  --batch-size N          tasks per batch request for every backlog (default 1000, the API maximum)
  --concurrency N         batch requests in flight for every backlog (default 4)
  --rl-tasks N            rate_limit: send_email tasks submitted at once (default 3000)
  --rl-rate R             rate_limit: send_email ratePerSecond in the service config (default 100)
  --rl-burst N            rate_limit: send_email burst (default 10)
  --rl-noop-tasks N       rate_limit: noop tasks submitted at the same time (default 1000)
  --weight-tasks N        weights: noop tasks of each of tenants C and D (default 20000)
  --weight-c W            weights: tenant C's weight; D keeps weight 1 (default 3)
  --poll-ms MS            /metrics polling interval while waiting for completions (default 100)
  --lag-concurrency N     GET requests in flight when tasks are read back (default 8)
  --timeout S             overall time bound in seconds (default 600)
  --workers N             WORKERS for the service (default: the service's config)
  --worker-concurrency N  WORKER_CONCURRENCY (default: the service's config)
  --partitions N          PARTITIONS (default: the service's config)
  --log-level L           LOG_LEVEL (default: info)
  --out FILE              results file (default load-tests/results/tenants-latest.json; every run
                          is also appended as one line to load-tests/results/tenants-runs.jsonl)
  --keep-tmp              keep the temp dirs (database, config, service log) for inspection
  --help                  this text
`;

export interface TenantsOptions {
  scenarios: Set<ScenarioName>;
  aTasks: number;
  bIntervalMs: number;
  baselineSeconds: number;
  batchSize: number;
  concurrency: number;
  rlTasks: number;
  rlRate: number;
  rlBurst: number;
  rlNoopTasks: number;
  weightTasks: number;
  weightC: number;
  pollMs: number;
  lagConcurrency: number;
  timeoutS: number;
  workers: number | null;
  workerConcurrency: number | null;
  partitions: number | null;
  logLevel: string;
  out: string;
  history: string;
  keepTmp: boolean;
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag, an unknown scenario or a number out of range
 */
export function parseTenantsOptions(argv: string[]): TenantsOptions | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      scenarios: { type: 'string' },
      'a-tasks': { type: 'string' },
      'b-interval-ms': { type: 'string' },
      'baseline-seconds': { type: 'string' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      'rl-tasks': { type: 'string' },
      'rl-rate': { type: 'string' },
      'rl-burst': { type: 'string' },
      'rl-noop-tasks': { type: 'string' },
      'weight-tasks': { type: 'string' },
      'weight-c': { type: 'string' },
      'poll-ms': { type: 'string' },
      'lag-concurrency': { type: 'string' },
      timeout: { type: 'string' },
      workers: { type: 'string' },
      'worker-concurrency': { type: 'string' },
      partitions: { type: 'string' },
      'log-level': { type: 'string' },
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
  const int = (name: string, raw: string | undefined, def: number, min: number, max?: number): number => Math.floor(num(name, raw, def, min, max));
  const intOrNull = (name: string, raw: string | undefined, min: number, max: number): number | null =>
    raw === undefined ? null : int(name, raw, 0, min, max);
  const scenarios = new Set<ScenarioName>();
  for (const s of (values.scenarios ?? SCENARIOS.join(',')).split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!(SCENARIOS as readonly string[]).includes(s)) throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(s)} (known: ${SCENARIOS.join(', ')})`);
    scenarios.add(s as ScenarioName);
  }
  if (scenarios.size === 0) throw new UsageError('--scenarios: name at least one scenario');
  return {
    scenarios,
    aTasks: int('a-tasks', values['a-tasks'], 100_000, 1, 10_000_000),
    bIntervalMs: num('b-interval-ms', values['b-interval-ms'], 10, 1, 60_000),
    baselineSeconds: num('baseline-seconds', values['baseline-seconds'], 10, 0, 3600),
    batchSize: int('batch-size', values['batch-size'], 1000, 1, 1000),
    concurrency: int('concurrency', values.concurrency, 4, 1, 256),
    rlTasks: int('rl-tasks', values['rl-tasks'], 3000, 1, 1_000_000),
    rlRate: num('rl-rate', values['rl-rate'], 100, 0.001, 100_000),
    rlBurst: num('rl-burst', values['rl-burst'], 10, 1, 100_000),
    rlNoopTasks: int('rl-noop-tasks', values['rl-noop-tasks'], 1000, 0, 1_000_000),
    weightTasks: int('weight-tasks', values['weight-tasks'], 20_000, 1, 10_000_000),
    weightC: num('weight-c', values['weight-c'], 3, 0.001, 1_000_000),
    pollMs: int('poll-ms', values['poll-ms'], 100, 10, 10_000),
    lagConcurrency: int('lag-concurrency', values['lag-concurrency'], 8, 1, 256),
    timeoutS: num('timeout', values.timeout, 600, 1, 24 * 3600),
    workers: intOrNull('workers', values.workers, 1, 64),
    workerConcurrency: intOrNull('worker-concurrency', values['worker-concurrency'], 1, 10_000),
    partitions: intOrNull('partitions', values.partitions, 1, 4096),
    logLevel: values['log-level'] ?? 'info',
    out: path.resolve(values.out ?? path.join(RESULTS_DIR, 'tenants-latest.json')),
    history: path.join(RESULTS_DIR, 'tenants-runs.jsonl'),
    keepTmp: values['keep-tmp'] ?? false,
  };
}

/**
 * The Options of bench-throughput that the shared Service class reads (workers, worker
 * concurrency, partitions, log level): its defaults with these overridden. No CPU profile.
 */
export function serviceOptions(o: TenantsOptions): Options {
  const base = parseOptions([]) as Options;
  return {
    ...base,
    workers: o.workers,
    workerConcurrency: o.workerConcurrency,
    partitions: o.partitions,
    logLevel: o.logLevel,
    cpuProfDir: null,
    keepTmp: o.keepTmp,
    timeoutS: o.timeoutS,
  };
}
