/**
 * Command-line flags of bench-cron: the --help text, the CronOptions they parse into (defaults
 * depend on the mode: every second or `--every-minute`), UsageError for bad flags (exit code 2),
 * and the Options object the shared Service class expects.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Options, parseOptions, UsageError } from '../cli-options';
import { RESULTS_DIR } from '../paths';

export { UsageError };

export const CRON_HELP = `bench-cron: cron firing accuracy of the scheduler (fire lag, start lag, exactness, CPU, RSS)

  --crons N               cron definitions to create (default 1000; 10000 with --every-minute)
  --seconds S             how long they fire after the last one is created (default 20; 120 with
                          --every-minute). The measured window ends at the first fire time at or
                          after that instant
  --every-minute          expression "0 * * * * *" (second 0 of every minute) instead of
                          "* * * * * *" (every second); the run then takes more than 2 minutes
  --settle-ms MS          time the crons keep running after the window end before they are
                          paused, so firings of the window that run late are still made
                          (default 2000; 10000 with --every-minute)
  --lag-sample N          instances fetched with GET for the start-lag figures (default 2000)
  --concurrency N         requests in flight for create, pause and read-back (default 8)
  --timeout S             overall time bound in seconds (default 300; 600 with --every-minute)
  --workers N             WORKERS for the service (default: the service's config)
  --worker-concurrency N  WORKER_CONCURRENCY (default: the service's config)
  --partitions N          PARTITIONS (default: the service's config)
  --log-level L           LOG_LEVEL (default: info)
  --cpu-prof DIR          run the service with --cpu-prof --cpu-prof-dir=DIR
  --out FILE              results file (default load-tests/results/cron-latest.json; every run is
                          also appended as one line to load-tests/results/cron-runs.jsonl)
  --keep-tmp              keep the temp dir (database + service log) for inspection
  --help                  this text
`;

export interface CronOptions {
  crons: number;
  seconds: number;
  everyMinute: boolean;
  /** Fire period of the expression (ms): 1,000 or 60,000. */
  periodMs: number;
  cronExpression: string;
  settleMs: number;
  lagSample: number;
  concurrency: number;
  timeoutS: number;
  workers: number | null;
  workerConcurrency: number | null;
  partitions: number | null;
  logLevel: string;
  cpuProfDir: string | null;
  out: string;
  history: string;
  keepTmp: boolean;
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag or a number out of range
 */
export function parseCronOptions(argv: string[]): CronOptions | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      crons: { type: 'string' },
      seconds: { type: 'string' },
      'every-minute': { type: 'boolean' },
      'settle-ms': { type: 'string' },
      'lag-sample': { type: 'string' },
      concurrency: { type: 'string' },
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
  const everyMinute = values['every-minute'] ?? false;
  return {
    crons: Math.floor(num('crons', values.crons, everyMinute ? 10_000 : 1000, 1, 100_000)),
    seconds: num('seconds', values.seconds, everyMinute ? 120 : 20, 1, 3600),
    everyMinute,
    periodMs: everyMinute ? 60_000 : 1000,
    cronExpression: everyMinute ? '0 * * * * *' : '* * * * * *',
    settleMs: Math.floor(num('settle-ms', values['settle-ms'], everyMinute ? 10_000 : 2000, 0, 600_000)),
    lagSample: Math.floor(num('lag-sample', values['lag-sample'], 2000, 1)),
    concurrency: Math.floor(num('concurrency', values.concurrency, 8, 1, 256)),
    timeoutS: num('timeout', values.timeout, everyMinute ? 600 : 300, 1, 24 * 3600),
    workers: intOrNull('workers', values.workers, 1, 64),
    workerConcurrency: intOrNull('worker-concurrency', values['worker-concurrency'], 1, 10_000),
    partitions: intOrNull('partitions', values.partitions, 1, 4096),
    logLevel: values['log-level'] ?? 'info',
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    out: path.resolve(values.out ?? path.join(RESULTS_DIR, 'cron-latest.json')),
    history: path.join(RESULTS_DIR, 'cron-runs.jsonl'),
    keepTmp: values['keep-tmp'] ?? false,
  };
}

/**
 * The Options of bench-throughput that the shared Service class reads (workers, worker
 * concurrency, partitions, log level, CPU profile dir): its defaults with these overridden.
 */
export function serviceOptions(o: CronOptions): Options {
  const base = parseOptions([]) as Options;
  return {
    ...base,
    workers: o.workers,
    workerConcurrency: o.workerConcurrency,
    partitions: o.partitions,
    logLevel: o.logLevel,
    cpuProfDir: o.cpuProfDir,
    keepTmp: o.keepTmp,
    timeoutS: o.timeoutS,
  };
}
