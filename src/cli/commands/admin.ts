import { Command, InvalidArgumentError } from 'commander';
import type { TenantPutBody } from '../../sdk/client';
import { CliEnv, contextOf, numberValue, positiveInt } from '../context';
import { details, print, table } from '../output';

const TENANT_COLUMNS: Array<[string, string]> = [
  ['TENANT_ID', 'tenant_id'],
  ['WEIGHT', 'weight'],
  ['RATE_LIMIT', 'rate_limit'],
];
const RATE_COLUMNS: Array<[string, string]> = [
  ['TASK_TYPE', 'task_type'],
  ['RATE_PER_SECOND', 'rate_per_second'],
  ['BURST', 'burst'],
];
const CONCURRENCY_COLUMNS: Array<[string, string]> = [
  ['KEY', 'key'],
  ['MAX_RUNNING', 'max_running'],
  ['RUNNING', 'running'],
];

/** `tenant set|delete|list`, `rate-limit set|delete|list`, `concurrency-limit set|get|delete|list`, `audit` (admin key). */
export function adminCommands(program: Command, cli: CliEnv): void {
  const tenant = program.command('tenant').description("tenants' weights and start rate limits (admin key)");
  tenant
    .command('set')
    .description("set a tenant's weight and/or start rate limit")
    .argument('<tenant_id>')
    .option('--weight <w>', 'weight in the round-robin (> 0)', numberValue)
    .option('--rate <per_second>', 'start rate limit, starts per second', numberValue)
    .option('--burst <n>', 'burst of the rate limit', numberValue)
    .option('--no-rate-limit', 'remove its start rate limit')
    .action(async (id: string, f: { weight?: number; rate?: number; burst?: number; rateLimit: boolean }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const body: TenantPutBody = {
        ...(f.weight !== undefined ? { weight: f.weight } : {}),
        ...(f.rate !== undefined ? { rate_limit: { rate_per_second: f.rate, ...(f.burst !== undefined ? { burst: f.burst } : {}) } } : {}),
        ...(f.rateLimit === false ? { rate_limit: null } : {}),
      };
      if (Object.keys(body).length === 0) throw new InvalidArgumentError('give --weight, --rate or --no-rate-limit');
      const res = await client.tenants.put(id, body);
      print(io, res, () => details(res));
    });
  tenant
    .command('delete')
    .description("delete a tenant's stored settings (the config's apply again; its tasks are not touched)")
    .argument('<tenant_id>')
    .action(async (id: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.tenants.delete(id);
      print(io, res, () => details(res));
    });
  tenant
    .command('list')
    .description('list tenants with settings')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const tenants = await client.tenants.list();
      print(io, { tenants }, () => table(tenants, TENANT_COLUMNS));
    });

  const rate = program.command('rate-limit').description('start limits per task type (admin key)');
  rate
    .command('set')
    .description('limit the starts of a task type (token bucket)')
    .argument('<task_type>')
    .argument('<rate_per_second>', 'starts per second', numberValue)
    .option('--burst <n>', 'starts at once', numberValue)
    .action(async (taskType: string, perSecond: number, f: { burst?: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.rateLimits.put(taskType, {
        rate_per_second: perSecond,
        ...(f.burst !== undefined ? { burst: f.burst } : {}),
      });
      print(io, res, () => details(res));
    });
  rate
    .command('delete')
    .description("remove a task type's start limit")
    .argument('<task_type>')
    .action(async (taskType: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.rateLimits.delete(taskType);
      print(io, res, () => `${taskType}: limit removed\n`);
    });
  rate
    .command('list')
    .description('list task-type start limits')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const limits = await client.rateLimits.list();
      print(io, { rate_limits: limits }, () => table(limits, RATE_COLUMNS));
    });

  const conc = program.command('concurrency-limit').description('caps on running attempts per concurrency key (admin key)');
  conc
    .command('set')
    .description('cap the attempts with a concurrency key that run at once, cluster-wide')
    .argument('<key>')
    .argument('<max_running>', 'attempts at once', positiveInt)
    .action(async (key: string, max: number, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.concurrencyLimits.put(key, { max_running: max });
      print(io, res, () => details(res));
    });
  conc
    .command('get')
    .description("a key's limit (null: unlimited) and its running attempts")
    .argument('<key>')
    .action(async (key: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.concurrencyLimits.get(key);
      print(io, res, () => details(res));
    });
  conc
    .command('delete')
    .description("remove a key's limit (it becomes unlimited)")
    .argument('<key>')
    .action(async (key: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.concurrencyLimits.delete(key);
      print(io, res, () => `${key}: limit removed\n`);
    });
  conc
    .command('list')
    .description('list the concurrency limits')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const limits = await client.concurrencyLimits.list();
      print(io, { concurrency_limits: limits }, () => table(limits, CONCURRENCY_COLUMNS));
    });

  program
    .command('audit')
    .description('run an audit pass now: overdue tasks, expired leases, blocked workflow tasks in limbo (admin key)')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.audit();
      print(io, res, () => details(res));
    });
}
