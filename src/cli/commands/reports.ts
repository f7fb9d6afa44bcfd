import { Command, InvalidArgumentError } from 'commander';
import type { AttemptLogAppendBody, ExternalCompletionBody, ExternalProgressBody } from '../../sdk/client';
import { CliEnv, contextOf, jsonValue, positiveInt, readJsonFile } from '../context';
import { details, print, table } from '../output';

/**
 * `report complete|heartbeat|checkpoint|progress|log <task_id> --attempt N` (what an external worker
 * reports on an attempt it runs) and `queue lease <queue>` (take due tasks of a queue over HTTP).
 */
export function reportCommands(program: Command, cli: CliEnv): void {
  const report = program.command('report').description("an external worker's reports on an attempt it runs");
  const attempt = (c: Command) => c.argument('<task_id>').requiredOption('-a, --attempt <n>', 'the attempt being reported', positiveInt);

  attempt(report.command('complete').description('complete an attempt: with --result, or failed with --error'))
    .option('-r, --result <json>', 'the result as JSON', jsonValue)
    .option('-e, --error <message>', 'the attempt failed with this message')
    .option('--permanent', 'with --error: no retry (the task ends FAILED)')
    .option('--error-type <type>', 'with --error: the error class shown as error.type')
    .action(
      async (
        id: string,
        f: { attempt: number; result?: unknown; error?: string; permanent?: boolean; errorType?: string },
        cmd: Command,
      ) => {
        const { client, io } = contextOf(cmd, cli);
        if (f.error !== undefined && f.result !== undefined) throw new InvalidArgumentError('give --result or --error, not both');
        const body: ExternalCompletionBody =
          f.error !== undefined
            ? {
                attempt: f.attempt,
                error: { message: f.error, ...(f.permanent ? { permanent: true } : {}), ...(f.errorType ? { type: f.errorType } : {}) },
              }
            : { attempt: f.attempt, ...(f.result !== undefined ? { result: f.result } : {}) };
        const res = await client.reports.complete(id, body);
        print(io, res, () => `${id}: attempt ${res.attempt} recorded, task ${res.status}\n`);
      },
    );

  attempt(report.command('heartbeat').description("extend the attempt's lease")).action(
    async (id: string, f: { attempt: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.reports.heartbeat(id, { attempt: f.attempt });
      print(io, res, () => `${id}: lease until ${res.lease_expires_at}\n`);
    },
  );

  attempt(report.command('checkpoint').description('save a checkpoint the next attempt resumes from'))
    .requiredOption('-v, --value <json>', 'the checkpoint as JSON (null clears it)', jsonValue)
    .action(async (id: string, f: { attempt: number; value: unknown }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.reports.checkpoint(id, { attempt: f.attempt, value: f.value });
      print(io, res, () => `${id}: checkpoint of ${res.size_bytes} bytes saved at ${res.saved_at}\n`);
    });

  attempt(report.command('progress').description('report progress: a fraction 0..1 or {"done":6,"total":10,"message":"…"}'))
    .requiredOption('--progress <json>', 'the progress as JSON', jsonValue)
    .action(async (id: string, f: { attempt: number; progress: unknown }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.reports.progress(id, { attempt: f.attempt, progress: f.progress as ExternalProgressBody['progress'] });
      print(io, res, () => `${id}: progress recorded at ${res.progress_at}\n`);
    });

  attempt(
    report.command('log').description('append ctx.log lines to the attempt (a JSON array of {level, msg, at?, fields?}; - for stdin)'),
  )
    .argument('<file>')
    .action(async (id: string, file: string, f: { attempt: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      // The service validates the lines (400 naming the field); the CLI passes the file through.
      const lines = readJsonFile(file, true) as AttemptLogAppendBody['lines'] | AttemptLogAppendBody['lines'][number];
      const res = await client.tasks.appendLogs(id, { attempt: f.attempt, lines: Array.isArray(lines) ? lines : [lines] });
      print(io, res, () => details(res));
    });

  const queue = program.command('queue').description('pull work from a queue over HTTP');
  queue
    .command('lease')
    .description('take up to --max due tasks of a queue (each with its attempt and lease)')
    .argument('<queue>')
    .requiredOption('--worker-id <id>', 'who takes them')
    .option('--max <n>', 'tasks at most', positiveInt)
    .option('--wait <seconds>', 'wait up to this long for a task', positiveInt)
    .action(async (name: string, f: { workerId: string; max?: number; wait?: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.queues.lease(name, { worker_id: f.workerId, max: f.max, wait_s: f.wait });
      print(io, res, () =>
        table(res.tasks, [
          ['TASK_ID', 'task_id'],
          ['TYPE', 'task_type'],
          ['ATTEMPT', 'attempt'],
        ]),
      );
    });
}
