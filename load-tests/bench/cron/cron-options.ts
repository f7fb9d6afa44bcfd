/**
 * Command-line flags of bench-cron: the --help text, the CronOptions they parse into (defaults
 * depend on the mode: every second or `--every-minute`) and UsageError for bad flags (exit code 2);
 * the parsing helpers are in ../flags.ts.
 */
import path from 'node:path';
import { cpuProfDir, int, num, parseFlags, SERVICE_FLAGS, ServiceFlags, serviceFlags, UsageError } from '../flags';
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

/** The flags of bench-cron; the service settings (ServiceFlags) are passed to the Service as they are. */
export interface CronOptions extends ServiceFlags {
  crons: number;
  seconds: number;
  everyMinute: boolean;
  /** Fire period of the expression (ms): 1,000 or 60,000. */
  periodMs: number;
  cronExpression: string;
  settleMs: number;
  lagSample: number;
  concurrency: number;
  cpuProfDir: string | null;
  /** The JSON-lines file every run is appended to. */
  history: string;
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag or a number out of range
 */
export function parseCronOptions(argv: string[]): CronOptions | null {
  const v = parseFlags(
    argv,
    ['crons', 'seconds', 'settle-ms', 'lag-sample', 'concurrency', 'cpu-prof', ...SERVICE_FLAGS],
    ['every-minute', 'keep-tmp'],
  );
  if (v === null) return null;
  const everyMinute = v['every-minute'] === true;
  // Read in the order of the flags above, so that the first bad one is the one reported.
  const sizes = {
    crons: int(v, 'crons', everyMinute ? 10_000 : 1000, 1, 100_000),
    seconds: num(v, 'seconds', everyMinute ? 120 : 20, 1, 3600),
    everyMinute,
    periodMs: everyMinute ? 60_000 : 1000,
    cronExpression: everyMinute ? '0 * * * * *' : '* * * * * *',
    settleMs: int(v, 'settle-ms', everyMinute ? 10_000 : 2000, 0, 600_000),
    lagSample: int(v, 'lag-sample', 2000, 1),
    concurrency: int(v, 'concurrency', 8, 1, 256),
  };
  return {
    ...sizes,
    ...serviceFlags(v, { timeoutS: everyMinute ? 600 : 300, outFile: 'cron-latest.json' }),
    cpuProfDir: cpuProfDir(v),
    history: path.join(RESULTS_DIR, 'cron-runs.jsonl'),
  };
}
