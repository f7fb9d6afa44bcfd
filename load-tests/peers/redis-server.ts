/**
 * The Redis the peers use: `REDIS_URL` when it is set (each scenario then uses its own queue name
 * or key prefix), otherwise a private `redis-server` on a free loopback port, without persistence
 * (`--save '' --appendonly no`, as a queue deployment that trades durability for speed would
 * run), its files in the bench's temp dir. Stopped with SIGTERM (SIGKILL after 5 s).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import Redis from 'ioredis';
import { freePort } from '../bench/service-process';
import { sleep } from '../bench/run-control';

export interface RedisHandle {
  url: string;
  /** True when the bench started this server (and so stops it). */
  owned: boolean;
  /** pid of the server the bench started (its CPU is part of a peer's cost), else null. */
  pid: number | null;
  settings: string;
  stop(): Promise<void>;
  killNow(): void;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Uses `REDIS_URL` or starts `redis-server` (must be on PATH; `.ci/services.sh` installs it). */
export async function ensureRedis(dir: string): Promise<RedisHandle> {
  const external = process.env.REDIS_URL;
  if (external)
    return {
      url: external,
      owned: false,
      pid: null,
      settings: `external REDIS_URL (${external})`,
      stop: async () => undefined,
      killNow: () => undefined,
    };
  const port = await freePort();
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', ''];
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d) => (err += d));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (e) =>
      reject(new Error(`redis-server could not start (${e.message}); install it (apt-get install redis-server) or set REDIS_URL`)),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${err.slice(0, 300)}`)));
  });
  failed.catch(() => undefined);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await Promise.race([canConnect(port), failed])) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('redis-server did not accept connections within 10 s');
    }
    await sleep(50);
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url: `redis://127.0.0.1:${port}`,
    owned: true,
    pid: child.pid ?? null,
    settings: `redis-server ${execVersion()} started by the bench on 127.0.0.1:${port}, --save '' --appendonly no (no persistence)`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
    killNow: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

function execVersion(): string {
  try {
    const out = execFileSync('redis-server', ['--version'], { encoding: 'utf8' });
    return /v=(\S+)/.exec(out)?.[1] ?? '';
  } catch {
    return '';
  }
}

/**
 * Deletes every key matching one of `patterns` (SCAN + UNLINK), so that a run on a shared Redis
 * (`REDIS_URL`) leaves nothing behind. Returns the number of keys deleted.
 */
export async function purgeKeys(url: string, patterns: string[]): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  let deleted = 0;
  try {
    await redis.connect();
    for (const match of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) deleted += await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
