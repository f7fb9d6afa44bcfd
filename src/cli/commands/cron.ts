import { Command, Option, OptionValues } from 'commander';
import type { CronCreateBody, CronPatchBody } from '../../sdk/client';
import { CliEnv, contextOf, jsonValue, positiveInt } from '../context';
import { details, pageTable, print } from '../output';
import { simpleCommand } from '../simple-command';

const CRON_COLUMNS: Array<[string, string]> = [
  ['CRON_ID', 'cron_id'],
  ['NAME', 'name'],
  ['EXPRESSION', 'cron_expression'],
  ['TIMEZONE', 'timezone'],
  ['TYPE', 'task_type'],
  ['STATUS', 'status'],
  ['NEXT_FIRE', 'next_fire_time'],
];

const RUN_COLUMNS: Array<[string, string]> = [
  ['FIRE_TIME', 'fire_time'],
  ['OUTCOME', 'outcome'],
  ['REASON', 'reason'],
  ['TASK_ID', 'task_id'],
  ['STATUS', 'status'],
];

/** `cron add|get|list|update|pause|resume|delete|runs|preview`. */
export function cronCommands(program: Command, cli: CliEnv): void {
  const cron = program.command('cron').description('recurring tasks');

  cron
    .command('add')
    .description('create a cron task')
    .argument('<name>')
    .argument('<cron_expression>', 'e.g. "30 2 * * *" (quote it)')
    .argument('<task_type>')
    .option('--tz <zone>', 'IANA time zone', 'UTC')
    .option('-p, --payload <json>', 'payload as JSON', jsonValue)
    .addOption(new Option('--overlap <policy>', 'overlap policy').choices(['skip', 'queue', 'cancel_running']))
    .addOption(new Option('--catch-up <mode>', 'missed firings').choices(['none', 'latest', 'all']))
    .addOption(new Option('--priority <priority>', 'priority').choices(['high', 'medium', 'low']))
    .option('--preview <n>', 'also show the next N fire times', positiveInt)
    .option('--disabled', 'create it paused')
    .action(async (name: string, expression: string, taskType: string, f: OptionValues, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const body = {
        name,
        cron_expression: expression,
        task_type: taskType,
        timezone: f.tz,
        ...(f.payload !== undefined ? { payload: f.payload } : {}),
        ...(f.overlap ? { overlap_policy: f.overlap } : {}),
        ...(f.catchUp ? { catch_up: f.catchUp } : {}),
        ...(f.priority ? { priority: f.priority } : {}),
        ...(f.disabled ? { enabled: false } : {}),
      } as CronCreateBody;
      const created = await client.crons.create(body, { preview: f.preview });
      print(io, created, () => details(created));
    });

  cron
    .command('get')
    .description('show a cron task')
    .argument('<cron_id>')
    .option('--preview <n>', 'also show the next N fire times', positiveInt)
    .action(async (id: string, f: { preview?: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const c = await client.crons.get(id, { preview: f.preview });
      print(io, c, () => details(c));
    });

  cron
    .command('list')
    .description('list cron tasks')
    .option('--enabled <bool>', 'true or false')
    .option('--tenant <tenant>', 'filter by tenant (admin key)')
    .option('--limit <n>', 'page size', positiveInt, 50)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (f: { enabled?: string; tenant?: string; limit: number; cursor?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.crons.list({
        enabled: f.enabled as 'true' | 'false' | undefined,
        tenant: f.tenant,
        limit: f.limit,
        cursor: f.cursor,
      });
      print(io, page, () => pageTable(page.cron_tasks, CRON_COLUMNS, page.next_cursor));
    });

  cron
    .command('update')
    .description('change a cron task: the fields of a JSON object (e.g. \'{"cron_expression": "0 * * * *"}\')')
    .argument('<cron_id>')
    .argument('<changes>', 'JSON object of definition or template fields', jsonValue)
    .action(async (id: string, changes: unknown, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const updated = await client.crons.patch(id, changes as CronPatchBody);
      print(io, updated, () => details(updated));
    });

  for (const [verb, enabled] of [
    ['pause', false],
    ['resume', true],
  ] as const) {
    cron
      .command(verb)
      .description(enabled ? 'resume a paused cron task (from now; the paused period is not caught up)' : 'pause a cron task')
      .argument('<cron_id>')
      .action(async (id: string, _f: unknown, cmd: Command) => {
        const { client, io } = contextOf(cmd, cli);
        const updated = enabled ? await client.crons.resume(id) : await client.crons.pause(id);
        print(io, updated, () => `${id}: ${updated.enabled ? 'enabled' : 'paused'}; next fire ${updated.next_fire_time ?? '-'}\n`);
      });
  }

  simpleCommand(cron, cli, {
    name: 'delete',
    description: 'delete a cron task (tasks it already created stay)',
    argument: '<cron_id>',
    run: (client, id) => client.crons.delete(id),
    human: (_r, id) => `${id}: deleted\n`,
  });

  cron
    .command('runs')
    .description('fire records of a cron task, latest first')
    .argument('<cron_id>')
    .option('--limit <n>', 'page size', positiveInt, 20)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (id: string, f: { limit: number; cursor?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.crons.runs(id, { limit: f.limit, cursor: f.cursor });
      print(io, page, () => pageTable(page.runs, RUN_COLUMNS, page.next_cursor));
    });

  cron
    .command('preview')
    .description('the next fire times of an expression (nothing stored)')
    .argument('<cron_expression>', 'e.g. "30 2 * * *" (quote it)')
    .option('--tz <zone>', 'IANA time zone', 'UTC')
    .option('--from <time>', 'start after this RFC 3339 time (default now)')
    .option('-c, --count <n>', 'how many fire times (1..100)', positiveInt, 5)
    .action(async (expression: string, f: { tz: string; from?: string; count: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.crons.preview({
        cron_expression: expression,
        timezone: f.tz,
        count: f.count,
        ...(f.from ? { from: f.from } : {}),
      });
      print(io, res, () => `${res.fire_times.join('\n')}\n`);
    });
}
