import { Command, Option, OptionValues } from 'commander';
import { CliEnv, contextOf, jsonValue, positiveInt } from '../context';
import { details, print, table } from '../output';

const CRON_COLUMNS: Array<[string, string]> = [
  ['CRON_ID', 'cron_id'],
  ['NAME', 'name'],
  ['EXPRESSION', 'cron_expression'],
  ['TIMEZONE', 'timezone'],
  ['TYPE', 'task_type'],
  ['ENABLED', 'enabled'],
  ['NEXT_FIRE', 'next_fire_time'],
];

/** `cron add|list|pause|resume|preview`. */
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
      };
      const created = await client.post(`/api/v1/cron-tasks${f.preview ? `?preview=${f.preview}` : ''}`, body);
      print(io, created, () => details(created));
    });

  cron
    .command('list')
    .description('list cron tasks')
    .option('--enabled <bool>', 'true or false')
    .option('--limit <n>', 'page size', positiveInt, 50)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (f: { enabled?: string; limit: number; cursor?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.get('/api/v1/cron-tasks', { enabled: f.enabled, limit: f.limit, cursor: f.cursor });
      print(io, page, () => table(page.cron_tasks, CRON_COLUMNS) + (page.next_cursor ? `next page: --cursor ${page.next_cursor}\n` : ''));
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
        const updated = await client.patch(`/api/v1/cron-tasks/${encodeURIComponent(id)}`, { enabled });
        print(io, updated, () => `${id}: ${updated.enabled ? 'enabled' : 'paused'}; next fire ${updated.next_fire_time ?? '-'}\n`);
      });
  }

  cron
    .command('preview')
    .description('the next fire times of an expression (nothing stored)')
    .argument('<cron_expression>', 'e.g. "30 2 * * *" (quote it)')
    .option('--tz <zone>', 'IANA time zone', 'UTC')
    .option('--from <time>', 'start after this RFC 3339 time (default now)')
    .option('-c, --count <n>', 'how many fire times (1..100)', positiveInt, 5)
    .action(async (expression: string, f: { tz: string; from?: string; count: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.post('/api/v1/cron-tasks/preview', {
        cron_expression: expression,
        timezone: f.tz,
        count: f.count,
        ...(f.from ? { from: f.from } : {}),
      });
      print(io, res, () => `${(res.fire_times as string[]).join('\n')}\n`);
    });
}
