import { Command, InvalidArgumentError } from 'commander';
import type { TenantPutBody } from '../../sdk/client';
import { CliEnv, contextOf, numberValue, positiveInt } from '../context';
import { details, print, table } from '../output';
import { simpleCommand } from '../simple-command';

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
    .option('--burst <n>', 'burst of the rate limit (default 1: at most the rate in any 1 s window)', numberValue)
    .option('--no-rate-limit', 'remove its start rate limit')
    .action(async (id: string, f: { weight?: number; rate?: number; burst?: number; rateLimit: boolean }, cmd: Command) => {
      // Flags that cannot mean anything together are refused, not one of them dropped.
      if (f.rateLimit === false && (f.rate !== undefined || f.burst !== undefined))
        throw new InvalidArgumentError('--no-rate-limit removes the limit: give it without --rate and --burst');
      if (f.burst !== undefined && f.rate === undefined)
        throw new InvalidArgumentError('--burst is the burst of a rate limit: give --rate with it (the limit is set whole)');
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
  simpleCommand(tenant, cli, {
    name: 'delete',
    description: "delete a tenant's stored settings (the config's apply again; its tasks are not touched)",
    argument: '<tenant_id>',
    run: (client, id) => client.tenants.delete(id),
  });
  simpleCommand(tenant, cli, {
    name: 'list',
    description: 'list tenants with settings',
    run: async (client) => ({ tenants: await client.tenants.list() }),
    human: (r) => table(r.tenants, TENANT_COLUMNS),
  });

  const rate = program.command('rate-limit').description('start limits per task type (admin key)');
  rate
    .command('set')
    .description('limit the starts of a task type (token bucket)')
    .argument('<task_type>')
    .argument('<rate_per_second>', 'starts per second', numberValue)
    .option('--burst <n>', 'starts at once (default 1: at most the rate in any 1 s window)', numberValue)
    .action(async (taskType: string, perSecond: number, f: { burst?: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.rateLimits.put(taskType, {
        rate_per_second: perSecond,
        ...(f.burst !== undefined ? { burst: f.burst } : {}),
      });
      print(io, res, () => details(res));
    });
  simpleCommand(rate, cli, {
    name: 'delete',
    description: "remove a task type's stored start limit (the config's applies again)",
    argument: '<task_type>',
    run: (client, taskType) => client.rateLimits.delete(taskType),
    human: (r, taskType) =>
      r.rate_limit
        ? `${taskType}: stored limit removed; the config's ${r.rate_limit.rate_per_second}/s (burst ${r.rate_limit.burst}) applies\n`
        : `${taskType}: limit removed\n`,
  });
  simpleCommand(rate, cli, {
    name: 'list',
    description: 'list task-type start limits',
    run: async (client) => ({ rate_limits: await client.rateLimits.list() }),
    human: (r) => table(r.rate_limits, RATE_COLUMNS),
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
  simpleCommand(conc, cli, {
    name: 'get',
    description: "a key's limit (null: unlimited) and its running attempts",
    argument: '<key>',
    run: (client, key) => client.concurrencyLimits.get(key),
  });
  simpleCommand(conc, cli, {
    name: 'delete',
    description: "remove a key's limit (it becomes unlimited)",
    argument: '<key>',
    run: (client, key) => client.concurrencyLimits.delete(key),
    human: (_r, key) => `${key}: limit removed\n`,
  });
  simpleCommand(conc, cli, {
    name: 'list',
    description: 'list the concurrency limits',
    run: async (client) => ({ concurrency_limits: await client.concurrencyLimits.list() }),
    human: (r) => table(r.concurrency_limits, CONCURRENCY_COLUMNS),
  });
  simpleCommand(program, cli, {
    name: 'audit',
    description: 'run an audit pass now: overdue tasks, expired leases, blocked workflow tasks in limbo (admin key)',
    run: (client) => client.audit(),
  });
}
