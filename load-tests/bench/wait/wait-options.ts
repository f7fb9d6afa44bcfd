/**
 * Command-line flags of bench-wait: the --help text and the WaitOptions they parse into; bad
 * flags throw UsageError (exit code 2). The parsing helpers are in ../flags.ts.
 */
import path from 'node:path';
import { int, num, parseFlags, SERVICE_FLAGS, ServiceFlags, serviceFlags, UsageError } from '../flags';
import { RESULTS_DIR } from '../paths';

export { UsageError };

export const WAIT_HELP = `bench-wait: how soon GET /api/v1/tasks/{id}?wait= answers after the task ends

  Submits --tasks short \`sleep\` tasks (one batch request per 1,000), holds one ?wait= request
  per task while they run, and measures for each answer the delay between the task's end (its
  completed_at) and the moment the answer arrived. Then --timeouts waits on tasks scheduled an
  hour ahead, to measure how late an answer at the timeout comes.

  --tasks N               tasks, one wait each (default 1000)
  --lead-ms MS            the tasks sleep at least this long, so every wait is held before its
                          task ends (default 2000)
  --spread-ms MS          sleeps spread over this much more, so the ends are spread (default 2000)
  --wait-s S              the ?wait= of those requests (default 30)
  --timeouts N            waits that time out (default 5; timeouts of 1, 1.5, 2, ... s)
  --timeout S             overall time bound in seconds (default 180)
  --workers N             WORKERS for the service (default: the service's config)
  --worker-concurrency N  WORKER_CONCURRENCY (default: the service's config)
  --partitions N          PARTITIONS (default: the service's config)
  --log-level L           LOG_LEVEL (default: info)
  --out FILE              results file (default load-tests/results/wait-latest.json; every run is
                          also appended as one line to load-tests/results/wait-runs.jsonl)
  --keep-tmp              keep the temp dir (database + service log) for inspection
  --help                  this text
`;

/** The flags of bench-wait. */
export interface WaitOptions extends ServiceFlags {
  tasks: number;
  leadMs: number;
  spreadMs: number;
  waitS: number;
  timeouts: number;
  /** The JSON-lines file every run is appended to. */
  history: string;
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag or a number out of range
 */
export function parseWaitOptions(argv: string[]): WaitOptions | null {
  const v = parseFlags(argv, ['tasks', 'lead-ms', 'spread-ms', 'wait-s', 'timeouts', ...SERVICE_FLAGS], ['keep-tmp']);
  if (v === null) return null;
  return {
    tasks: int(v, 'tasks', 1000, 1, 4000),
    leadMs: int(v, 'lead-ms', 2000, 0, 600_000),
    spreadMs: int(v, 'spread-ms', 2000, 0, 600_000),
    waitS: num(v, 'wait-s', 30, 1, 60),
    timeouts: int(v, 'timeouts', 5, 0, 50),
    ...serviceFlags(v, { timeoutS: 180, outFile: 'wait-latest.json' }),
    history: path.join(RESULTS_DIR, 'wait-runs.jsonl'),
  };
}
