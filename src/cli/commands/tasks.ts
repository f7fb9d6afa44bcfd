import { Command, Option } from 'commander';
import { InvalidArgumentError } from 'commander';
import { batchSizeValue, CliEnv, chunks, contextOf, jsonValue, numberValue, positiveInt, readJsonFile } from '../context';
import { details, pageTable, print, progress, table } from '../output';
import { SchedulerApiError, type ListTasksQuery } from '../../sdk/client';
import { taskChangeCommands } from './task-changes';
import type { SchedulerClient, SubmitAck, TaskSubmissionBody } from '../../sdk/client';
import type { Io } from '../output';
import { taskView } from '../task-view';

/** Columns of a task list. */
export const TASK_COLUMNS: Array<[string, string]> = [
  ['TASK_ID', 'task_id'],
  ['TYPE', 'task_type'],
  ['STATUS', 'status'],
  ['PRIORITY', 'priority'],
  ['ATTEMPTS', 'attempts'],
  ['CREATED', 'created_at'],
];

interface SubmitFlags {
  payload?: unknown;
  priority?: string;
  at?: string;
  maxRetries?: number;
  retryBackoff?: string;
  retryDelay?: number;
  maxRetryDelay?: number;
  retryJitter?: boolean;
  timeout?: number;
  queue?: string;
  idempotencyKey?: string;
  concurrencyKey?: string;
  metadata?: unknown;
  traceparent?: string;
  count?: number;
  file?: string;
  batchSize: number;
}

interface ListFlags {
  status?: string;
  type?: string;
  queue?: string;
  idempotencyKey?: string;
  tenant?: string;
  limit: number;
  cursor?: string;
}

/** The flags that set a field of the submitted task (not with --file, whose tasks carry their own). */
const TASK_FIELD_FLAGS: ReadonlyArray<[keyof SubmitFlags, string]> = [
  ['payload', '--payload'],
  ['priority', '--priority'],
  ['at', '--at'],
  ['maxRetries', '--max-retries'],
  ['retryBackoff', '--retry-backoff'],
  ['retryDelay', '--retry-delay'],
  ['maxRetryDelay', '--max-retry-delay'],
  ['retryJitter', '--[no-]retry-jitter'],
  ['timeout', '--timeout'],
  ['queue', '--queue'],
  ['idempotencyKey', '--idempotency-key'],
  ['concurrencyKey', '--concurrency-key'],
  ['metadata', '--metadata'],
];

/** The submission body the flags describe (only the fields given). */
function submissionOf(taskType: string, f: SubmitFlags): TaskSubmissionBody {
  return {
    task_type: taskType,
    ...(f.payload !== undefined ? { payload: f.payload } : {}),
    ...(f.priority !== undefined ? { priority: f.priority } : {}),
    ...(f.at !== undefined ? { scheduled_at: f.at } : {}),
    ...(f.maxRetries !== undefined ? { max_retries: f.maxRetries } : {}),
    ...(f.retryBackoff !== undefined ? { retry_backoff: f.retryBackoff } : {}),
    ...(f.retryDelay !== undefined ? { retry_delay_seconds: f.retryDelay } : {}),
    ...(f.maxRetryDelay !== undefined ? { max_retry_delay_seconds: f.maxRetryDelay } : {}),
    ...(f.retryJitter !== undefined ? { retry_jitter: f.retryJitter } : {}),
    ...(f.timeout !== undefined ? { timeout_seconds: f.timeout } : {}),
    ...(f.queue !== undefined ? { queue: f.queue } : {}),
    ...(f.idempotencyKey !== undefined ? { idempotency_key: f.idempotencyKey } : {}),
    ...(f.concurrencyKey !== undefined ? { concurrency_key: f.concurrencyKey } : {}),
    ...(f.metadata !== undefined ? { metadata: f.metadata } : {}),
  } as TaskSubmissionBody;
}

/**
 * Submits `tasks` through `POST /api/v1/tasks/batch` in chunks of `batchSize`, with a progress
 * bar. Chunks are atomic on the server; a failing chunk stops the run (earlier chunks stay).
 * @returns the acknowledgements in order and the elapsed seconds
 * @throws PartialSubmitError when a chunk fails: the acknowledgements of the chunks stored before
 *   it, and the API's error with its `tasks[i]` counted from the start of `tasks`, not of the chunk
 */
export async function submitInBatches(
  client: SchedulerClient,
  io: Io,
  tasks: TaskSubmissionBody[],
  batchSize: number,
  traceparent?: string,
): Promise<{ acks: SubmitAck[]; seconds: number }> {
  const bar = progress(io, tasks.length, 'submitting');
  const acks: SubmitAck[] = [];
  const started = process.hrtime.bigint();
  try {
    for (const chunk of chunks(tasks, batchSize)) {
      try {
        acks.push(...(await client.tasks.batch(chunk, { traceparent })));
      } catch (err) {
        throw new PartialSubmitError(acks, tasks.length, err instanceof SchedulerApiError ? shiftItems(err, acks.length) : err);
      }
      bar.increment(chunk.length);
    }
  } finally {
    bar.stop();
  }
  return { acks, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** A bulk submission stopped by a failing batch: what was stored before it, and why it stopped. */
export class PartialSubmitError extends Error {
  constructor(
    /** Acknowledgements of the tasks stored before the failing batch (items 0 to `acks.length - 1`). */
    readonly acks: SubmitAck[],
    /** How many tasks the run had. */
    readonly total: number,
    /** The failing batch's error (a SchedulerApiError names the item from the start of the run). */
    override readonly cause: unknown,
  ) {
    super(`submitted ${acks.length} of ${total} tasks; the batch from item ${acks.length} on failed and nothing after it was sent`);
  }
}

/** `err` with its `tasks[i]` (field, message) counted from item `offset` of the run. */
function shiftItems(err: SchedulerApiError, offset: number): SchedulerApiError {
  if (offset === 0) return err;
  const shift = (text: string) => text.replace(/\btasks\[(\d+)\]/g, (_m, i: string) => `tasks[${Number(i) + offset}]`);
  const details = typeof err.details.field === 'string' ? { ...err.details, field: shift(err.details.field) } : err.details;
  return new (err.constructor as typeof SchedulerApiError)(err.status, err.code, shift(err.message), details, err.retryAfterMs);
}

/** `submit`, `get`, `list`, `cancel`. */
export function taskCommands(program: Command, cli: CliEnv): void {
  program
    .command('submit')
    .description('submit a task (or --count N copies, or the tasks of --file, in batches)')
    .argument('[task_type]', 'task type: one a handler serves, or of an external queue (not with --file)')
    .option('-p, --payload <json>', 'payload as JSON', jsonValue)
    .addOption(new Option('--priority <priority>', 'priority').choices(['high', 'medium', 'low']))
    .option('--at <time>', 'run at this RFC 3339 time with offset (scheduled_at)')
    .option('--max-retries <n>', 'retries after the first attempt', numberValue)
    .addOption(new Option('--retry-backoff <kind>', 'delay growth between retries').choices(['exponential', 'fixed', 'linear']))
    .option('--retry-delay <seconds>', 'first retry delay in seconds (retry_delay_seconds)', numberValue)
    .option('--max-retry-delay <seconds>', 'cap of a retry delay in seconds (max_retry_delay_seconds)', numberValue)
    .option('--retry-jitter', 'spread retry delays at random (retry_jitter: true)')
    .option('--no-retry-jitter', 'retry exactly at the computed delay (retry_jitter: false)')
    .option('--timeout <seconds>', 'handler timeout in seconds', numberValue)
    .option('--queue <name>', 'queue')
    .option('--idempotency-key <key>', 'submit at most once per key')
    .option('--concurrency-key <key>', "share this key's concurrency limit (PUT /api/v1/concurrency-limits/{key})")
    .option('--metadata <json>', 'metadata object as JSON', jsonValue)
    .option('--traceparent <value>', 'W3C traceparent to join (sent as the traceparent header)')
    .option('-n, --count <n>', 'submit N copies (bulk, with a progress bar)', positiveInt)
    .option('-f, --file <path>', 'submit the tasks in a JSON array or JSON-lines file (- for stdin)')
    .option('--batch-size <n>', 'tasks per batch request in bulk mode (1..1000)', batchSizeValue, 500)
    .action(async (taskType: string | undefined, flags: SubmitFlags, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      if (!flags.file && !taskType) throw new InvalidArgumentError('give a task_type or --file');
      if (flags.file) {
        // The file names every task and its fields: anything given beside it would be dropped.
        const beside = TASK_FIELD_FLAGS.filter(([key]) => flags[key] !== undefined).map(([, flag]) => flag);
        if (taskType !== undefined || flags.count !== undefined || beside.length > 0)
          throw new InvalidArgumentError(
            `--file takes each task's type and fields from the file: not with ${[
              ...(taskType !== undefined ? ['a task_type'] : []),
              ...(flags.count !== undefined ? ['--count'] : []),
              ...beside,
            ].join(', ')}`,
          );
      }
      if (flags.file || flags.count !== undefined) {
        let tasks: TaskSubmissionBody[];
        if (flags.file) {
          const data = readJsonFile(flags.file, true) as TaskSubmissionBody | TaskSubmissionBody[] | { tasks?: TaskSubmissionBody[] };
          tasks = Array.isArray(data) ? data : ((data as { tasks?: TaskSubmissionBody[] })?.tasks ?? [data as TaskSubmissionBody]);
        } else {
          tasks = Array.from({ length: flags.count as number }, () => submissionOf(taskType as string, flags));
        }
        const { acks, seconds } = await submitInBatches(client, io, tasks, flags.batchSize, flags.traceparent);
        print(io, { submitted: acks.length, seconds, tasks: acks }, () => submittedLine(acks, seconds));
        return;
      }
      const ack = await client.tasks.submit(submissionOf(taskType as string, flags), { traceparent: flags.traceparent });
      print(io, ack, () =>
        table(
          [{ ...ack }],
          [
            ['TASK_ID', 'task_id'],
            ['STATUS', 'status'],
            ['SCHEDULED_AT', 'scheduled_at'],
            ['CREATED', 'created_at'],
          ],
        ),
      );
    });

  program
    .command('get')
    .description('show a task (with its progress and checkpoint)')
    .argument('<task_id>')
    .option('--attempts', 'include the history of every attempt')
    .action(async (id: string, flags: { attempts?: boolean }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const task = await client.tasks.get(id, { attempts: flags.attempts });
      print(io, task, () => details(taskView({ ...task })));
    });

  program
    .command('list')
    .description('list tasks, newest first')
    .option('--status <status>', 'filter by status (PENDING, RUNNING, SUCCEEDED, DEAD, …)')
    .option('--type <task_type>', 'filter by task type')
    .option('--queue <queue>', 'filter by queue')
    .option('--idempotency-key <key>', 'the task submitted with this idempotency key')
    .option('--tenant <tenant>', 'filter by tenant (admin key)')
    .option('--limit <n>', 'page size (1..1000)', positiveInt, 20)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (flags: ListFlags, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.tasks.list({
        status: flags.status as ListTasksQuery['status'],
        task_type: flags.type,
        queue: flags.queue,
        idempotency_key: flags.idempotencyKey,
        tenant: flags.tenant,
        limit: flags.limit,
        cursor: flags.cursor,
      });
      print(io, page, () => pageTable(page.tasks, TASK_COLUMNS, page.next_cursor));
    });

  program
    .command('cancel')
    .description('cancel a task')
    .argument('<task_id>')
    .action(async (id: string, _flags: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.tasks.cancel(id);
      print(io, res, () => (res.status === 'RUNNING' ? `${id}: running, its handler is being aborted\n` : `${id}: ${res.status}\n`));
    });

  taskChangeCommands(program, cli);
}

/**
 * The human line of a submission in batches: the acknowledgements and their rate, and how many of
 * them answered an idempotency key already stored (`idempotent_replayed`: no new task; `--count 3
 * --idempotency-key k` makes one task, not three).
 */
function submittedLine(acks: Array<{ idempotent_replayed?: boolean }>, seconds: number): string {
  const replayed = acks.filter((a) => a.idempotent_replayed === true).length;
  const rate = Math.round(acks.length / Math.max(seconds, 1e-6));
  const news =
    replayed > 0 ? ` (${acks.length - replayed} new, ${replayed} answered by an existing task with the same idempotency key)` : '';
  return `submitted ${acks.length} tasks${news} in ${seconds.toFixed(2)} s (${rate} tasks/s)\n`;
}
