/**
 * bench-scale's flags: how many SCHEDULED tasks the big store holds, how they are spread, the
 * throughput run measured on both stores, an optional cache of the built store, and the service
 * flags every harness shares.
 */
import path from 'node:path';
import { int, num, parseFlags, SERVICE_FLAGS, ServiceFlags, serviceFlags, str } from '../flags';

export const SCALE_HELP = `bench-scale: the embedded store with millions of SCHEDULED tasks against an empty one

Two services, one after the other, each on a fresh copy of its store: first an empty store, then
one holding --stored SCHEDULED noop tasks due over the next --spread-hours (the first after
--start-after-hours, so none comes due during the run). For each: start-up time (spawn → /readyz),
the service's RSS once ready, the throughput run (--tasks run-now noop tasks in batches; submit
and end-to-end rates, dispatch lag), and peak RSS. Then the ratios big/empty. With --rounds N the
pair runs N times, alternating (empty, big, empty, big, …), and the verdict takes the median of
the N ratios: one 5 s run per store varies by about ±10 % on a small VM, as much as the target's
margin.

  --stored N               SCHEDULED tasks in the big store (default 10000000)
  --spread-hours H         their due times spread over H hours (default 72)
  --start-after-hours H    the first one due H hours from now (default 6)
  --tasks N                run-now noop tasks of the throughput run (default 50000)
  --due-tasks N            also a due run in each phase (default 0: none): N SCHEDULED noop tasks
                           written into the phase's store before its service starts, all due
                           --due-after-s after that; their rate (N ÷ last finish − due instant)
                           and its ratio big/empty are reported beside the run-now throughput run's
  --due-after-s S          when the due run's tasks come due, after they are written (default 15;
                           must exceed the start-up)
  --rounds N               empty/big pairs, alternating; the verdict uses the median ratio (default 1)
  --batch-size N           tasks per batch request (default 1000, the API maximum)
  --concurrency N          batch requests in flight (default 4)
  --lag-sample N           tasks read back for the dispatch lag (default 2000)
  --poll-ms MS             /metrics polling interval while waiting for completions (default 100)
  --store-cache DIR        keep the built big store in DIR and copy it on later runs with the same
                           --stored, --spread-hours and partitions; one older than --start-after-hours
                           minus 1 h is built again (default: build it in the temp dir)
  --timeout S              overall time bound in seconds (default 3600)
  --workers N, --worker-concurrency N, --partitions N, --log-level L
  --out FILE               results file (default load-tests/results/scale-latest.json)
  --keep-tmp               keep the temp dirs
  --help                   this text
`;

export interface ScaleOptions extends ServiceFlags {
  stored: number;
  spreadHours: number;
  startAfterHours: number;
  tasks: number;
  batchSize: number;
  concurrency: number;
  lagSample: number;
  pollMs: number;
  storeCache: string | null;
  rounds: number;
  dueTasks: number;
  dueAfterS: number;
}

/**
 * Parses the flags. Returns null for `--help`.
 * @throws UsageError for an unknown flag or a number out of range
 */
export function parseScaleOptions(argv: string[]): ScaleOptions | null {
  const v = parseFlags(
    argv,
    [
      'stored',
      'spread-hours',
      'start-after-hours',
      'tasks',
      'rounds',
      'batch-size',
      'concurrency',
      'lag-sample',
      'poll-ms',
      'store-cache',
      'due-tasks',
      'due-after-s',
      ...SERVICE_FLAGS,
    ],
    ['keep-tmp'],
  );
  if (v === null) return null;
  const cache = str(v, 'store-cache');
  return {
    stored: int(v, 'stored', 10_000_000, 1, 200_000_000),
    spreadHours: num(v, 'spread-hours', 72, 0.1, 24 * 365),
    startAfterHours: num(v, 'start-after-hours', 6, 0.1, 24 * 365),
    tasks: int(v, 'tasks', 50_000, 1, 10_000_000),
    batchSize: int(v, 'batch-size', 1000, 1, 1000),
    concurrency: int(v, 'concurrency', 4, 1, 256),
    lagSample: int(v, 'lag-sample', 2000, 1),
    pollMs: int(v, 'poll-ms', 100, 10, 10_000),
    storeCache: cache ? path.resolve(cache) : null,
    rounds: int(v, 'rounds', 1, 1, 20),
    dueTasks: int(v, 'due-tasks', 0, 0, 10_000_000),
    dueAfterS: num(v, 'due-after-s', 15, 1, 3600),
    ...serviceFlags(v, { timeoutS: 3600, outFile: 'scale-latest.json' }),
  };
}
