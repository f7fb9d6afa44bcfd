import { spawn, ChildProcess, execFileSync } from 'node:child_process';
import net from 'node:net';
import Redis from 'ioredis';

/** REDIS_URL of the test run (`source .ci/services.sh`), or undefined: Redis tests skip. */
export const REDIS_URL = process.env.REDIS_URL;

/** Why Redis tests are skipped without it. */
export const NEEDS_REDIS = 'needs REDIS_URL (a Redis server; `source .ci/services.sh` starts one)';

/** A unique key/channel prefix per test, so tests sharing one Redis never see each other's keys. */
export function testPrefix(): string {
  return `test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}

/** A plain ioredis client on REDIS_URL (close it with `quit()`). */
export function redisClient(): Redis {
  if (!REDIS_URL) throw new Error(NEEDS_REDIS);
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** True when a `redis-server` binary is on PATH (the degraded-mode tests start their own). */
export function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A private redis-server (no persistence) that a test may stop, as an outage. */
export interface OwnRedis {
  url: string;
  port: number;
  /** Stops the server (SIGTERM) and waits for its exit. */
  stop(): Promise<void>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the server: it keeps its connections but does not answer. */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void;
}

/**
 * Starts a private redis-server on a loopback port (default: a free one; give the port of a
 * stopped one to bring it back) and waits until it answers PING.
 */
export async function startOwnRedis(atPort?: number): Promise<OwnRedis> {
  const port = atPort ?? (await freePort());
  const child: ChildProcess = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  // Queues the PING until the server accepts connections (retried every 50 ms), then answers.
  const probe = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  try {
    await Promise.race([probe.ping(), exited.then(() => Promise.reject(new Error(`redis-server on port ${port} exited at start`)))]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    probe.disconnect();
  }
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
    },
    signal(sig) {
      child.kill(sig);
    },
  };
}
