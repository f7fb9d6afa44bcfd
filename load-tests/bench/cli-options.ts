/**
 * Command-line flags of bench-throughput: the --help text, the Options they parse into (with
 * their defaults and bounds) and UsageError for bad flags (exit code 2); the parsing helpers are
 * in flags.ts.
 */
import { cpuProfDir, int, nameList, num, parseFlags, SERVICE_FLAGS, serviceFlags, UsageError } from './flags';

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

export { UsageError };

const SCENARIOS = ['throughput', 'paced', 'scheduled', 'workflow'] as const;

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag, an unknown scenario or a number out of range
 */
export function parseOptions(argv: string[]): Options | null {
  const v = parseFlags(
    argv,
    [
      'tasks',
      'batch-size',
      'concurrency',
      'lag-sample',
      'paced-seconds',
      'rate',
      'paced-lag-sample',
      'scheduled-count',
      'scheduled-delay-ms',
      'scenarios',
      'poll-ms',
      'cpu-prof',
      'dag-layers',
      'dag-width',
      'dag-fan-in',
      ...SERVICE_FLAGS,
    ],
    ['keep-tmp'],
  );
  if (v === null) return null;
  const scenarios: Set<string> = nameList(v, 'scenarios', 'throughput,paced,scheduled', SCENARIOS, 'scenario');
  // Read in the order of the flags above, so that the first bad one is the one reported.
  const sizes = {
    tasks: int(v, 'tasks', 50_000, 1, 10_000_000),
    batchSize: int(v, 'batch-size', 1000, 1, 1000),
    concurrency: int(v, 'concurrency', 4, 1, 256),
    lagSample: int(v, 'lag-sample', 2000, 1),
    pacedSeconds: num(v, 'paced-seconds', 10, 0.1, 3600),
    rate: num(v, 'rate', 1000, 1, 100_000),
    pacedLagSample: int(v, 'paced-lag-sample', 10_000, 1),
    scheduledCount: int(v, 'scheduled-count', 200, 1, 1000),
    scheduledDelayMs: int(v, 'scheduled-delay-ms', 2000, 100, 600_000),
    scenarios,
    pollMs: int(v, 'poll-ms', 100, 10, 10_000),
  };
  return {
    ...sizes,
    ...serviceFlags(v, { timeoutS: 300, outFile: 'latest.json' }),
    cpuProfDir: cpuProfDir(v),
    dagLayers: int(v, 'dag-layers', 100, 1, 10_000),
    dagWidth: int(v, 'dag-width', 100, 1, 10_000),
    dagFanIn: int(v, 'dag-fan-in', 2, 1, 10_000),
  };
}
