/**
 * Command-line flags of bench-tenants: the --help text, the TenantsOptions they parse into (with
 * their defaults and bounds) and UsageError for bad flags (exit code 2); the parsing helpers are
 * in ../flags.ts.
 */
import path from 'node:path';
import { cpuProfDir, int, nameList, num, parseFlags, SERVICE_FLAGS, ServiceFlags, serviceFlags, str, UsageError } from '../flags';
import { RESULTS_DIR } from '../paths';

export { UsageError };

export const A_MODES = ['due_at_once', 'run_now'] as const;
export type AMode = (typeof A_MODES)[number];

export const SCENARIOS = ['fairness', 'rate_limit', 'weights'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const TENANTS_HELP = `bench-tenants: fairness between tenants, task-type rate limits and tenant weights

Each scenario runs on its own fresh service (temp SQLite file, the config file below).

  --scenarios LIST        comma list of fairness,rate_limit,weights (default all three)
  --a-tasks N             fairness: tenant A's noop backlog (default 100000)
  --a-mode M              fairness: due_at_once (A's tasks all scheduled_at one second, submitted
                          before it: the burst comes due at one instant; default) or run_now (A's
                          tasks due at once as they are submitted, the figures before 2026-12-02)
  --a-due-lead-s S        fairness, due_at_once: A's due second is S s after its first send
                          (default 0 = auto: 10 + 1 per 10,000 tasks)
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
  --cpu-prof DIR          run each service with node --cpu-prof into DIR (read them with
                          node dist/load-tests/cpuprofile-summary.js DIR)
  --keep-tmp              keep the temp dirs (database, config, service log) for inspection
  --help                  this text
`;

/** The flags of bench-tenants; the service settings (ServiceFlags) are passed to the Service as they are. */
export interface TenantsOptions extends ServiceFlags {
  scenarios: Set<ScenarioName>;
  aTasks: number;
  /** due_at_once: A's tasks all scheduled_at one second ahead; run_now: due as submitted. */
  aMode: AMode;
  /** Seconds from A's first send to its due second (due_at_once); 0 = auto. */
  aDueLeadS: number;
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
  /** The JSON-lines file every run is appended to. */
  history: string;
  /** --cpu-prof DIR: the service runs with `--cpu-prof` into DIR (profiles written when it exits). */
  cpuProfDir: string | null;
}

/** --a-mode: one of A_MODES (default due_at_once). @throws UsageError for another value */
function aMode(raw: string | undefined): AMode {
  if (raw === undefined) return 'due_at_once';
  if ((A_MODES as readonly string[]).includes(raw)) return raw as AMode;
  throw new UsageError(`--a-mode: expected one of ${A_MODES.join(', ')}, got ${raw}`);
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag, an unknown scenario or a number out of range
 */
export function parseTenantsOptions(argv: string[]): TenantsOptions | null {
  const v = parseFlags(
    argv,
    [
      'scenarios',
      'a-tasks',
      'a-mode',
      'a-due-lead-s',
      'b-interval-ms',
      'baseline-seconds',
      'batch-size',
      'concurrency',
      'rl-tasks',
      'rl-rate',
      'rl-burst',
      'rl-noop-tasks',
      'weight-tasks',
      'weight-c',
      'poll-ms',
      'lag-concurrency',
      'cpu-prof',
      ...SERVICE_FLAGS,
    ],
    ['keep-tmp'],
  );
  if (v === null) return null;
  const scenarios = nameList(v, 'scenarios', SCENARIOS.join(','), SCENARIOS, 'scenario', true);
  if (scenarios.size === 0) throw new UsageError('--scenarios: name at least one scenario');
  // Read in the order of the flags above, so that the first bad one is the one reported.
  const sizes = {
    scenarios,
    aTasks: int(v, 'a-tasks', 100_000, 1, 10_000_000),
    aMode: aMode(str(v, 'a-mode')),
    aDueLeadS: num(v, 'a-due-lead-s', 0, 0, 3600),
    bIntervalMs: num(v, 'b-interval-ms', 10, 1, 60_000),
    baselineSeconds: num(v, 'baseline-seconds', 10, 0, 3600),
    batchSize: int(v, 'batch-size', 1000, 1, 1000),
    concurrency: int(v, 'concurrency', 4, 1, 256),
    rlTasks: int(v, 'rl-tasks', 3000, 1, 1_000_000),
    rlRate: num(v, 'rl-rate', 100, 0.001, 100_000),
    rlBurst: num(v, 'rl-burst', 10, 1, 100_000),
    rlNoopTasks: int(v, 'rl-noop-tasks', 1000, 0, 1_000_000),
    weightTasks: int(v, 'weight-tasks', 20_000, 1, 10_000_000),
    weightC: num(v, 'weight-c', 3, 0.001, 1_000_000),
    pollMs: int(v, 'poll-ms', 100, 10, 10_000),
    lagConcurrency: int(v, 'lag-concurrency', 8, 1, 256),
  };
  return {
    ...sizes,
    ...serviceFlags(v, { timeoutS: 600, outFile: 'tenants-latest.json' }),
    cpuProfDir: cpuProfDir(v),
    history: path.join(RESULTS_DIR, 'tenants-runs.jsonl'),
  };
}
