/**
 * Command-line flags of bench-soak: the --help text and the SoakOptions they parse into (defaults
 * and bounds; durations are given in minutes or seconds as named, stored in ms). Parsing helpers
 * are in ../flags.ts; a bad flag is a UsageError (exit code 2).
 */
import path from 'node:path';
import { cpuProfDir, int, num, parseFlags, SERVICE_FLAGS, ServiceFlags, serviceFlags, str, UsageError } from '../flags';
import { RESULTS_DIR } from '../paths';

export { UsageError };

export const SOAK_HELP = `bench-soak: an hour of mixed load on one service (embedded SQLite), sampled, with a verdict

Load: steady run-now submissions of tenant S at --rate (paced, in batches every --batch-ms), a
share of them failing their first attempt and retried (tenant R), --crons cron definitions firing
every --cron-every seconds, a small workflow (DAG) every --workflow-every seconds, and tenant F's
flood of --flood-tasks tasks at once every --flood-every minutes (mid-period). Every task's
handler writes one side-effect line when it succeeds: at the end each acknowledged task must have
exactly one.

  --duration MIN          total soak time in minutes, warm-up included (default 60)
  --warmup MIN            warm-up in minutes; the verdict's reference window starts there (default 10)
  --window MIN            length of the reference and last windows compared (default: --flood-every)
  --sample-interval S     seconds between two samples (default 10)
  --rate N                steady submissions per second (default: half the peak measured first)
  --peak-tasks N          tasks of the run-now burst that measures the peak (default 20000)
  --batch-ms MS           the steady tenant sends one batch every MS ms (default 100)
  --retry-fraction F      share of the steady stream that fails its first attempt (default 0.02)
  --flood-every MIN       minutes between two floods of tenant F (default 10; 0 = none)
  --flood-tasks N         tasks of each flood (default 20000)
  --crons N               cron definitions (default 3)
  --cron-every S          their period in seconds, 1..59 (default 2)
  --workflow-every S      seconds between two workflows (default 5; 0 = none)
  --workflow-layers N     layers of each workflow's DAG (default 3)
  --workflow-width N      tasks per layer (default 4; fan-in 2)
  --lag-sample N          steady tasks read back per sample interval for their dispatch lag (default 200)
  --tolerance F           allowed relative change of the verdict's figures (default 0.10)
  --retention-min M       the service's resultRetentionMs in minutes: finished tasks older than M
                          are deleted by its maintenance pass every minute, so the store stops
                          growing (default: the service's own, 7 days: the store grows all hour)
  --timeout S             overall bound in seconds (default: duration + 15 min)
  --workers N             WORKERS for the service (default: the service's config)
  --worker-concurrency N  WORKER_CONCURRENCY (default: the service's config)
  --partitions N          PARTITIONS (default: the service's config)
  --log-level L           LOG_LEVEL (default: warn)
  --out FILE              results file (default load-tests/results/soak-latest.json; every run is
                          also appended as one line to load-tests/results/soak-runs.jsonl)
  --cpu-prof DIR          run the service with node --cpu-prof into DIR (written when it stops)
  --keep-tmp              keep the temp dir (store, side-effect logs, service log)
  --help                  this text
`;

/** Every setting of one soak run (durations in ms). */
export interface SoakOptions extends ServiceFlags {
  durationMs: number;
  warmupMs: number;
  windowMs: number;
  sampleIntervalMs: number;
  /** Steady submissions per second; null = measure the peak and take half. */
  rate: number | null;
  peakTasks: number;
  batchMs: number;
  retryFraction: number;
  floodEveryMs: number;
  floodTasks: number;
  crons: number;
  cronEveryS: number;
  workflowEveryMs: number;
  workflowLayers: number;
  workflowWidth: number;
  lagSample: number;
  tolerance: number;
  /** The service's resultRetentionMs (null: its default). */
  retentionMs: number | null;
  cpuProfDir: string | null;
  history: string;
}

const MIN = 60_000;

/**
 * Parses the flags. @returns the options, or null for --help
 * @throws UsageError for an unknown flag, a value out of range, or a warm-up and windows that
 *   leave no room (warm-up + window > duration)
 */
export function parseSoakOptions(argv: string[]): SoakOptions | null {
  const strings = [
    ...SERVICE_FLAGS,
    'cpu-prof',
    'duration',
    'warmup',
    'window',
    'sample-interval',
    'rate',
    'peak-tasks',
    'batch-ms',
    'retry-fraction',
    'flood-every',
    'flood-tasks',
    'crons',
    'cron-every',
    'workflow-every',
    'workflow-layers',
    'workflow-width',
    'lag-sample',
    'tolerance',
    'retention-min',
  ];
  const v = parseFlags(argv, strings, ['keep-tmp']);
  if (v === null) return null;
  const durationMs = num(v, 'duration', 60, 1, 24 * 60) * MIN;
  const warmupMs = num(v, 'warmup', 10, 0, 24 * 60) * MIN;
  const floodEveryMs = num(v, 'flood-every', 10, 0, 24 * 60) * MIN;
  const windowMs = num(v, 'window', floodEveryMs > 0 ? floodEveryMs / MIN : 10, 0.5, 24 * 60) * MIN;
  if (warmupMs + windowMs > durationMs)
    throw new UsageError(`--warmup + --window (${(warmupMs + windowMs) / MIN} min) exceeds --duration (${durationMs / MIN} min)`);
  const sf = serviceFlags(v, { timeoutS: durationMs / 1000 + 15 * 60, outFile: 'soak-latest.json' });
  if (str(v, 'log-level') === undefined) sf.logLevel = 'warn';
  return {
    ...sf,
    durationMs,
    warmupMs,
    windowMs,
    sampleIntervalMs: num(v, 'sample-interval', 10, 1, 600) * 1000,
    rate: str(v, 'rate') === undefined ? null : num(v, 'rate', 0, 1, 1_000_000),
    peakTasks: int(v, 'peak-tasks', 20_000, 100, 10_000_000),
    batchMs: int(v, 'batch-ms', 100, 10, 10_000),
    retryFraction: num(v, 'retry-fraction', 0.02, 0, 1),
    floodEveryMs,
    floodTasks: int(v, 'flood-tasks', 20_000, 1, 10_000_000),
    crons: int(v, 'crons', 3, 0, 100),
    cronEveryS: int(v, 'cron-every', 2, 1, 59),
    workflowEveryMs: num(v, 'workflow-every', 5, 0, 3600) * 1000,
    workflowLayers: int(v, 'workflow-layers', 3, 1, 100),
    workflowWidth: int(v, 'workflow-width', 4, 1, 100),
    lagSample: int(v, 'lag-sample', 200, 1, 100_000),
    tolerance: num(v, 'tolerance', 0.1, 0, 10),
    retentionMs: str(v, 'retention-min') === undefined ? null : num(v, 'retention-min', 0, 1, 7 * 24 * 60) * MIN,
    cpuProfDir: cpuProfDir(v),
    history: path.join(RESULTS_DIR, 'soak-runs.jsonl'),
  };
}
