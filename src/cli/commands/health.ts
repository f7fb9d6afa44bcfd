import { Command } from 'commander';
import { CliEnv, CliExit, contextOf } from '../context';
import { details, print } from '../output';

/** `health` (liveness), `ready` (readiness; exit 1 when not ready) and `metrics` (Prometheus text, admin key). */
export function healthCommands(program: Command, cli: CliEnv): void {
  program
    .command('health')
    .description('liveness of the service (GET /healthz)')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.health.live();
      print(io, res, () => `${res.status}\n`);
    });

  program
    .command('ready')
    .description('readiness of the service (GET /readyz); exits 1 when not ready')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.health.ready();
      print(io, res, () => details(res));
      if (res.status === 'not_ready') throw new CliExit(1, 'not ready');
    });

  program
    .command('metrics')
    .description('the Prometheus metrics (GET /metrics, admin key)')
    .action(async (_f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const text = await client.health.metrics();
      print(io, { metrics: text }, () => text);
    });
}
