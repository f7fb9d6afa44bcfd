import { Command, InvalidArgumentError } from 'commander';
import type { DeadLetterQuery, SchedulerClient } from '../../sdk/client';
import { ConflictError, NotFoundError } from '../../sdk/client';
import { CliEnv, contextOf, positiveInt } from '../context';
import { pageTable, print, progress } from '../output';
import { simpleCommand } from '../simple-command';
import { TASK_COLUMNS } from './tasks';

interface DlqFilter {
  type?: string;
  queue?: string;
  tenant?: string;
  since?: string;
}

/** The API's filters of the flags. */
const queryOf = (f: DlqFilter): DeadLetterQuery => ({ task_type: f.type, queue: f.queue, tenant: f.tenant, since: f.since });

/** Every DEAD task id matching the filter, following `next_cursor` (pages of 1,000). */
async function allDeadIds(client: SchedulerClient, f: DlqFilter): Promise<string[]> {
  const ids: string[] = [];
  for await (const t of client.deadLetters.iterate({ ...queryOf(f), limit: 1000 })) ids.push(t.task_id);
  return ids;
}

/** `dlq list`, `dlq replay <id> | --all`, `dlq delete <id>`. */
export function dlqCommands(program: Command, cli: CliEnv): void {
  const dlq = program.command('dlq').description('dead-letter queue (tasks that used up their retries)');
  const filters = (c: Command) =>
    c
      .option('--type <task_type>', 'filter by task type')
      .option('--queue <queue>', 'filter by queue')
      .option('--tenant <tenant>', 'filter by tenant (admin key)')
      .option('--since <time>', 'finished at or after this RFC 3339 time');

  filters(dlq.command('list').description('list DEAD tasks, newest first'))
    .option('--limit <n>', 'page size', positiveInt, 20)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (f: DlqFilter & { limit: number; cursor?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.deadLetters.list({ ...queryOf(f), limit: f.limit, cursor: f.cursor });
      print(io, page, () => pageTable(page.tasks, TASK_COLUMNS, page.next_cursor));
    });

  filters(dlq.command('replay').description('run DEAD tasks again with a fresh retry budget: one id, or --all matching the filters'))
    .argument('[task_id]')
    .option('--all', 'replay every DEAD task matching the filters (progress bar)')
    .action(async (id: string | undefined, f: DlqFilter & { all?: boolean }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      if (!id && !f.all) throw new InvalidArgumentError('give a task_id or --all');
      if (id && f.all) throw new InvalidArgumentError('give a task_id or --all, not both');
      if (id) {
        const res = await client.deadLetters.replay(id);
        print(io, res, () => `${res.task_id}: ${res.status}\n`);
        return;
      }
      const ids = await allDeadIds(client, f);
      const bar = progress(io, ids.length, 'replaying');
      const replayed: string[] = [];
      const failed: Array<{ task_id: string; code: string; message: string }> = [];
      try {
        for (const taskId of ids) {
          try {
            await client.deadLetters.replay(taskId);
            replayed.push(taskId);
          } catch (err) {
            // Replayed or deleted by someone else meanwhile: report it and go on.
            if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
            failed.push({ task_id: taskId, code: err.code, message: err.message });
          }
          bar.increment();
        }
      } finally {
        bar.stop();
      }
      print(
        io,
        { replayed: replayed.length, skipped: failed },
        () =>
          `replayed ${replayed.length} of ${ids.length} DEAD tasks` +
          (failed.length ? ` (${failed.length} skipped: no longer DEAD)` : '') +
          '\n',
      );
    });

  simpleCommand(dlq, cli, {
    name: 'delete',
    description: 'delete a DEAD task and its history',
    argument: '<task_id>',
    run: (client, id) => client.deadLetters.delete(id),
    human: (_r, id) => `${id}: deleted\n`,
  });
}
