import { Command } from 'commander';
import { CliEnv } from '../context';
import { simpleCommand } from '../simple-command';

/** `health` (liveness), `ready` (readiness; exit 1 when not ready) and `metrics` (Prometheus text, admin key). */
export function healthCommands(program: Command, cli: CliEnv): void {
  simpleCommand(program, cli, {
    name: 'health',
    description: 'liveness of the service (GET /healthz)',
    run: async (client) => statusAnswer(await client.health.live(), ['ok'], 'GET /healthz'),
    human: (r) => `${r.status}\n`,
  });
  simpleCommand(program, cli, {
    name: 'ready',
    description: 'readiness of the service (GET /readyz); exits 1 when not ready',
    run: async (client) => statusAnswer(await client.health.ready(), ['ready', 'degraded', 'not_ready'], 'GET /readyz'),
    exitCode: (r) => (r.status === 'not_ready' ? 1 : 0),
  });
  simpleCommand(program, cli, {
    name: 'metrics',
    description: 'the Prometheus metrics (GET /metrics, admin key)',
    run: async (client) => ({ metrics: await client.health.metrics() }),
    human: (r) => r.metrics,
  });
}

/**
 * The answer of a health route, once its `status` is one the scheduler sends: a readiness probe
 * must not pass (exit 0) on whatever else answers 200 with JSON at that URL.
 * @throws Error naming the route and the answer (the CLI's exit 1, one line)
 */
function statusAnswer<T extends { status: string }>(answer: T, statuses: readonly string[], route: string): T {
  if (statuses.includes((answer as { status?: unknown }).status as string)) return answer;
  throw new Error(
    `the answer to ${route} has no status of the scheduler's (${statuses.join(', ')}): ${JSON.stringify(answer).slice(0, 200)}; is the URL the scheduler's?`,
  );
}
