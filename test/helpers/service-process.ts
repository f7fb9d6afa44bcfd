import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { http } from './http';
import { childPidsOf } from './process-files';
import { dropServiceSchema, serviceStoreEnv } from './service-store';
import { tempDir } from './temp-dir';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The real service (`node dist/src/main.js`) running as a child process. */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** stderr and stdout so far, for failure messages. */
  output(): string;
  /** SIGKILL and wait for exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful) and wait for exit; SIGKILL after `ms`. */
  stop(ms?: number): Promise<void>;
  /** Pids of the service's child processes (its forked workers), from /proc. */
  workerPids(): number[];
}

/**
 * The environment of a service process on `port` with its SQLite file in `dataDir`: the embedded
 * profile (unless `env` passes REDIS_URL itself: CI exports one for the Redis tests; an empty value
 * is ignored by the config loader), loopback, warnings only, then `env`. Under
 * `TEST_SERVICE_STORE=postgres` (test/helpers/service-store.ts) the store is `dataDir`'s own
 * PostgreSQL schema instead, unless `env` names a store itself.
 */
export function serviceEnv(dataDir: string, port: number, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    REDIS_URL: '',
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    SQLITE_PATH: path.join(dataDir, 'scheduler.db'),
    LOG_LEVEL: 'warn',
    ...(env.SCHEDULER_STORE === undefined ? serviceStoreEnv(dataDir) : {}),
    ...env,
  };
}

/** Where and how a service process runs, for {@link startServiceProcess} (default: here, on 127.0.0.1 and a free port). */
export interface ServiceLaunch {
  /**
   * A command the node command line is appended to, which must exec it in place (same pid), e.g.
   * `['ip', 'netns', 'exec', '<ns>']` (test/helpers/netns.ts).
   */
  prefix?: string[];
  /** `HOST` the service binds and the test reaches it on; default 127.0.0.1. */
  host?: string;
  /** `PORT`; default a free port of this namespace. */
  port?: number;
}

/**
 * Starts the service (on a free port with the SQLite file in `dataDir`, unless `launch` says
 * otherwise), and resolves once `/readyz` answers 200 (bounded by `timeoutMs`).
 */
export async function startServiceProcess(
  dataDir: string,
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  launch: ServiceLaunch = {},
): Promise<ServiceProcess> {
  const port = launch.port ?? (await freePort());
  const host = launch.host ?? '127.0.0.1';
  const main = path.resolve(__dirname, '..', '..', 'src', 'main.js');
  const [cmd, ...args] = [...(launch.prefix ?? []), process.execPath, main];
  const child = spawn(cmd, args, { env: serviceEnv(dataDir, port, { HOST: host, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://${host}:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited early (${child.exitCode}):\n${out}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not ready after ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50)); // polling for readiness, not timing logic
  }
  return {
    url,
    child,
    output: () => out,
    kill9: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    workerPids: () => childPidsOf(child.pid as number),
    stop: async (ms = 15_000) => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), ms);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * Mocha fixture: one service process for the enclosing `describe` (started in `before`, stopped and
 * its data removed in `after`), and a `submit` helper that expects 202 and returns the task id.
 */
export function useServiceProcess(env: Record<string, string> = {}): {
  readonly svc: ServiceProcess;
  submit(body: unknown): Promise<string>;
} {
  const dir = tempDir();
  let svc: ServiceProcess | null = null;
  before(async () => {
    svc = await startServiceProcess(dir.path, env);
  });
  after(async () => {
    await svc?.stop();
    await dropServiceSchema(dir.path);
    dir.remove();
  });
  return {
    get svc() {
      if (!svc) throw new Error('service not started');
      return svc;
    },
    async submit(body) {
      const res = await http('POST', `${this.svc.url}/api/v1/tasks`, body);
      if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.task_id as string;
    },
  };
}
