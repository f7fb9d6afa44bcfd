/**
 * Command-line flags of bench-peers: the --help text, PeerOptions with defaults and bounds, the
 * --quick preset and UsageError (exit code 2) for bad flags; the parsing helpers are in
 * ../bench/flags.ts.
 */
import { cpuProfDir, nameList, outFile, parseFlags, strictInt, str, UsageError } from '../bench/flags';

export const PEERS_HELP = `bench-peers: the same no-op scenarios on our service, BullMQ, Agenda, graphile-worker and
pg-boss, same machine, same run

  --systems LIST             comma list of ours,bullmq,agenda,graphile,graphile_batched,pgboss
                             (default ours,bullmq,agenda). The PostgreSQL peers use POSTGRES_URL
                             (a fresh database per scenario, dropped after), else a private
                             cluster (initdb in the temp dir, PG_BIN_DIR or /usr/lib/postgresql/15/bin)
  --ours-store S             sqlite (default) or postgres: our service with SCHEDULER_STORE=postgres
                             and POSTGRES_URL = a fresh database each round (dropped after)
  --graphile-concurrency N   graphile and graphile_batched: concurrency, maxPoolSize N + 1
                             (default 24, its published performance set-up)
  --pgboss-batch-size N      pg-boss work() batchSize (default 500)
  --pgboss-polling-ms MS     pg-boss work() pollingIntervalSeconds × 1000, at least 500 (default 500)
  --pgboss-workers N         pg-boss work() calls in the consumer process (default 1)
  --tasks N                  end-to-end and backlog scenarios, all but Agenda (default 20000)
  --agenda-tasks N           the same for Agenda, which is far slower (default 1000)
  --herd N                   herd scenario: jobs due at the same instant, all but Agenda (default 2000)
  --agenda-herd N            herd size for Agenda (default 2000)
  --herd-lead-ms MS          herd jobs are due at (enqueue start + MS) (default 5000)
  --backlog-lead-ms MS       ours: the backlog is submitted due at (start + MS) (default 5000)
  --bullmq-concurrency LIST  one BullMQ run per worker concurrency (default 50,500)
  --worker-concurrency N     ours: WORKER_CONCURRENCY, slots per worker process (default: the
                             environment's, else config/default.json)
  --agenda-concurrency N     Agenda defaultConcurrency = maxConcurrency (default 50)
  --agenda-process-every-ms MS  Agenda processEvery (default 1000)
  --agenda-lock-limit N      Agenda lockLimit = defaultLockLimit, 0 = none (default 0)
  --ours-poll-ms MS          ours: /metrics poll interval while waiting for the jobs to finish
                             (default 250). It only says when to stop waiting: the finish instant
                             is the service's scheduler_last_task_finished_timestamp_seconds
                             (from the scrape that saw them all), as BullMQ's is its 'completed'
                             event; each scrape costs the service's main thread a few ms
  --batch-size N             ours: tasks per batch request; BullMQ: jobs per addBulk; graphile:
                             per addJobs; pg-boss: per insert (default 1000)
  --in-flight N              batch requests / addBulk / addJobs / insert calls in flight (default 4)
  --agenda-in-flight N       Agenda now()/schedule() calls in flight (default 16)
  --time-bound-s S           longest wait for one scenario's jobs, ours and BullMQ (default 120)
  --agenda-time-bound-s S    the same for Agenda; the rate is then over what finished (default 60)
  --warmup N                 ours and BullMQ: N no-op jobs processed end to end, and waited for,
                             in the process that then runs the measured scenario, before it
                             (ours: the service, once before its backlog; BullMQ: each scenario's
                             consumer process, on a queue of its own). 0 = none: every system's
                             first scenario starts cold (default 0). Agenda gets none (~80 jobs/s)
  --rounds N                 run every system N times, in turn (ours, each peer, ours, …), and
                             report the median of each figure and of each ratio (default 1)
  --quick                    small sizes for npm run bench: tasks 5000, agenda-tasks 300,
                             herd 500, agenda-herd 300, bullmq-concurrency 50 (explicit flags win)
  --timeout S                overall bound in seconds (default 900 per round; --quick 600)
  --log-level L              LOG_LEVEL of our service (default warn)
  --out FILE                 results file (default load-tests/results/peers-latest.json)
  --keep-tmp                 keep the temp dir (database, logs)
  --cpu-prof DIR             run our service with --cpu-prof --cpu-prof-dir=DIR (written when it
                             exits; one service per round, all three scenarios in its profile)
  --pg-statements            ours with --ours-store postgres on the bench's own cluster (POSTGRES_URL
                             unset): pg_stat_statements is loaded, and each scenario reports the
                             service's statements (calls, rows, exec and plan ms) per 1,000 tasks
  --help                     this text
`;

export interface PeerOptions {
  systems: Set<string>;
  tasks: number;
  agendaTasks: number;
  herd: number;
  agendaHerd: number;
  herdLeadMs: number;
  backlogLeadMs: number;
  bullmqConcurrency: number[];
  /** Our WORKER_CONCURRENCY; null = the service's config. */
  workerConcurrency: number | null;
  agendaConcurrency: number;
  agendaProcessEveryMs: number;
  agendaLockLimit: number;
  /** Our /metrics poll interval while waiting (ms). */
  oursPollMs: number;
  batchSize: number;
  inFlight: number;
  agendaInFlight: number;
  timeBoundS: number;
  agendaTimeBoundS: number;
  /** Jobs each of ours and BullMQ processes before its measured scenario, in the same process (0: none). */
  warmup: number;
  /** Rounds of the whole comparison, one after the other; medians reported when more than one. */
  rounds: number;
  quick: boolean;
  timeoutS: number;
  logLevel: string;
  out: string;
  keepTmp: boolean;
  /** `--cpu-prof` directory for our service; null = no profile. */
  cpuProfDir: string | null;
  /** `--pg-statements`: pg_stat_statements figures per scenario of ours (the bench's own cluster only). */
  pgStatements: boolean;
  /** Our service's store: sqlite (its default) or postgres (a fresh database each round). */
  oursStore: 'sqlite' | 'postgres';
  /** graphile-worker concurrency (both graphile systems); maxPoolSize is one more. */
  graphileConcurrency: number;
  pgbossBatchSize: number;
  /** pg-boss pollingIntervalSeconds, in ms. */
  pgbossPollingMs: number;
  pgbossWorkers: number;
}

/** Every system bench-peers knows. */
export const SYSTEMS = ['ours', 'bullmq', 'agenda', 'graphile', 'graphile_batched', 'pgboss'] as const;
/** The systems whose store is PostgreSQL. */
export const PG_SYSTEMS = ['graphile', 'graphile_batched', 'pgboss'];

export { UsageError };

/** Every value flag bench-peers takes (the help text names each one; a test checks). */
export const FLAGS = [
  'systems',
  'tasks',
  'agenda-tasks',
  'herd',
  'agenda-herd',
  'herd-lead-ms',
  'backlog-lead-ms',
  'bullmq-concurrency',
  'worker-concurrency',
  'agenda-concurrency',
  'agenda-process-every-ms',
  'agenda-lock-limit',
  'ours-poll-ms',
  'batch-size',
  'in-flight',
  'agenda-in-flight',
  'time-bound-s',
  'agenda-time-bound-s',
  'warmup',
  'rounds',
  'timeout',
  'log-level',
  'out',
  'cpu-prof',
  'ours-store',
  'graphile-concurrency',
  'pgboss-batch-size',
  'pgboss-polling-ms',
  'pgboss-workers',
] as const;

/** Parses argv; null for --help; throws UsageError for a bad flag. */
export function parsePeerOptions(argv: string[]): PeerOptions | null {
  const values = parseFlags(argv, FLAGS, ['quick', 'keep-tmp', 'pg-statements']);
  if (values === null) return null;
  const quick = values.quick === true;
  const int = (name: string, def: number, quickDef: number, min: number, max = 10_000_000): number =>
    strictInt(values, name, quick ? quickDef : def, min, max);
  const rounds = int('rounds', 1, 1, 1, 20);
  const systems: Set<string> = nameList(values, 'systems', 'ours,bullmq,agenda', SYSTEMS, 'system', true);
  const oursStore = str(values, 'ours-store') ?? 'sqlite';
  if (oursStore !== 'sqlite' && oursStore !== 'postgres')
    throw new UsageError(`--ours-store must be sqlite or postgres, got ${JSON.stringify(oursStore)}`);
  const conc = (str(values, 'bullmq-concurrency') ?? (quick ? '50' : '50,500')).split(',').map((s) => Number(s.trim()));
  if (conc.some((c) => !Number.isInteger(c) || c < 1 || c > 10_000))
    throw new UsageError(`--bullmq-concurrency must list integers in [1, 10000]`);
  return {
    systems,
    tasks: int('tasks', 20_000, 5_000, 1),
    agendaTasks: int('agenda-tasks', 1_000, 300, 1),
    herd: int('herd', 2_000, 500, 1),
    agendaHerd: int('agenda-herd', 2_000, 300, 1),
    herdLeadMs: int('herd-lead-ms', 5_000, 5_000, 100, 600_000),
    backlogLeadMs: int('backlog-lead-ms', 5_000, 5_000, 100, 600_000),
    bullmqConcurrency: conc,
    workerConcurrency: values['worker-concurrency'] === undefined ? null : int('worker-concurrency', 0, 0, 1, 10_000),
    agendaConcurrency: int('agenda-concurrency', 50, 50, 1, 10_000),
    agendaProcessEveryMs: int('agenda-process-every-ms', 1_000, 1_000, 10, 600_000),
    agendaLockLimit: int('agenda-lock-limit', 0, 0, 0, 1_000_000),
    oursPollMs: int('ours-poll-ms', 250, 250, 10, 5_000),
    batchSize: int('batch-size', 1_000, 1_000, 1, 1_000),
    inFlight: int('in-flight', 4, 4, 1, 256),
    agendaInFlight: int('agenda-in-flight', 16, 16, 1, 1_000),
    timeBoundS: int('time-bound-s', 120, 60, 1, 3_600),
    agendaTimeBoundS: int('agenda-time-bound-s', 60, 20, 1, 3_600),
    warmup: int('warmup', 0, 0, 0, 1_000_000),
    rounds,
    quick,
    timeoutS: int('timeout', 900 * rounds, 600 * rounds, 10, 24 * 3_600),
    logLevel: str(values, 'log-level') ?? 'warn',
    out: outFile(values, 'peers-latest.json'),
    keepTmp: values['keep-tmp'] === true,
    cpuProfDir: cpuProfDir(values),
    pgStatements: values['pg-statements'] === true,
    oursStore,
    graphileConcurrency: int('graphile-concurrency', 24, 24, 1, 1_000),
    pgbossBatchSize: int('pgboss-batch-size', 500, 500, 1, 100_000),
    pgbossPollingMs: int('pgboss-polling-ms', 500, 500, 500, 600_000),
    pgbossWorkers: int('pgboss-workers', 1, 1, 1, 100),
  };
}
