import { Command } from 'commander';
import { CliEnv } from '../context';
import { simpleCommand } from '../simple-command';

/** `health` (liveness), `ready` (readiness; exit 1 when not ready) and `metrics` (Prometheus text, admin key). */
export function healthCommands(program: Command, cli: CliEnv): void {
  simpleCommand(program, cli, {
    name: 'health',
    description: 'liveness of the service (GET /healthz)',
    run: (client) => client.health.live(),
    human: (r) => `${r.status}\n`,
  });
  simpleCommand(program, cli, {
    name: 'ready',
    description: 'readiness of the service (GET /readyz); exits 1 when not ready',
    run: (client) => client.health.ready(),
    exitCode: (r) => (r.status === 'not_ready' ? 1 : 0),
  });
  simpleCommand(program, cli, {
    name: 'metrics',
    description: 'the Prometheus metrics (GET /metrics, admin key)',
    run: async (client) => ({ metrics: await client.health.metrics() }),
    human: (r) => r.metrics,
  });
}
