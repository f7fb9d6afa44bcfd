/**
 * The PostgreSQL the PostgreSQL peers (graphile-worker, pg-boss) and, with `--ours-store
 * postgres`, our service use: `POSTGRES_URL` when it is set, otherwise a private cluster made
 * with `initdb` in the bench's temp dir and started with `pg_ctl` on a free loopback port, with
 * PostgreSQL's default durability (fsync on, synchronous_commit on). Binaries from
 * PG_BIN_DIR or /usr/lib/postgresql/15/bin (Debian); initdb refuses root, so as root the
 * cluster's commands run as `postgres` through `runuser -u postgres --`.
 *
 * Each user gets a fresh database (`createDatabase`), dropped after (`dropDatabase`, WITH
 * (FORCE)), on the external server and on the private one alike. The private cluster is stopped
 * by `stop()` (pg_ctl stop -m fast) or, as the last resort, `killNow()` (SIGQUIT to the
 * postmaster: an immediate shutdown of it and its backends).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../bench/service-process';

export interface PgHandle {
  /** URL of the maintenance database (`postgres`), from which databases are created and dropped. */
  adminUrl: string;
  /** True when the bench started this cluster (and so stops it). */
  owned: boolean;
  /** Postmaster pid of the cluster the bench started (its CPU is part of a peer's cost), else null. */
  pid: number | null;
  settings: string;
  /** Creates database `name` (lower-case letters, digits, `_`) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops database `name`, disconnecting whoever is still on it; no error when it is gone. */
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
  killNow(): void;
}

const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** `url` with its database path replaced by `db`. */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Runs one statement on the maintenance database of `adminUrl`. */
async function admin(adminUrl: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function checkName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name ${JSON.stringify(name)}`);
  return name;
}

function databaseOps(adminUrl: string): Pick<PgHandle, 'createDatabase' | 'dropDatabase'> {
  return {
    async createDatabase(name) {
      await admin(adminUrl, `CREATE DATABASE ${checkName(name)}`);
      return withDatabase(adminUrl, name);
    },
    async dropDatabase(name) {
      await admin(adminUrl, `DROP DATABASE IF EXISTS ${checkName(name)} WITH (FORCE)`);
    },
  };
}

/** argv that runs a cluster binary as `postgres` when this process is root, else as itself. */
function asPostgres(bin: string, args: string[]): [string, string[]] {
  const file = path.join(BIN, bin);
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

function runOrThrow(bin: string, args: string[], what: string): void {
  const [file, argv] = asPostgres(bin, args);
  const r = spawnSync(file, argv, { encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw new Error(`${what}: ${r.error.message} (PostgreSQL binaries in ${BIN}; set PG_BIN_DIR or POSTGRES_URL)`);
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${(r.stderr || r.stdout).slice(-500)}`);
}

function serverVersion(): string {
  try {
    return execFileSync(path.join(BIN, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'postgres';
  }
}

/**
 * `POSTGRES_URL`, or a private cluster in `<dir>/pg` (superuser `bench`, trust on loopback);
 * `statements`: the private cluster loads pg_stat_statements (`--pg-statements`).
 * Throws when the cluster cannot be made or started.
 */
export async function ensurePostgres(dir: string, opts: { statements?: boolean } = {}): Promise<PgHandle> {
  const external = process.env.POSTGRES_URL;
  if (external) {
    const adminUrl = withDatabase(external, 'postgres');
    return {
      adminUrl,
      owned: false,
      pid: null,
      settings: `external POSTGRES_URL (${new URL(external).host}); a fresh database per scenario, dropped after`,
      ...databaseOps(adminUrl),
      stop: async () => undefined,
      killNow: () => undefined,
    };
  }
  const data = path.join(dir, 'pg');
  fs.mkdirSync(data, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) {
    // The temp dir is root's (0700): let `postgres` through it to its own data directory.
    fs.chmodSync(dir, 0o711);
    execFileSync('chown', ['postgres:postgres', data]);
  }
  runOrThrow('initdb', ['-D', data, '-U', 'bench', '--auth=trust', '-E', 'UTF8', '--no-locale'], 'initdb');
  const port = await freePort();
  const serverOpts =
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${data} -c max_connections=200` +
    (opts.statements
      ? ' -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on'
      : '');
  try {
    runOrThrow('pg_ctl', ['-D', data, '-l', path.join(data, 'server.log'), '-o', serverOpts, '-w', '-t', '60', 'start'], 'pg_ctl start');
  } catch (err) {
    // A server that came up too slowly is still stopped before the error goes on.
    try {
      runOrThrow('pg_ctl', ['-D', data, '-m', 'immediate', 'stop'], 'pg_ctl stop');
    } catch {
      /* it never started */
    }
    throw err;
  }
  const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let stopped = false;
  const killNow = () => {
    stopped = true;
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      /* already gone */
    }
  };
  const adminUrl = `postgres://bench@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    owned: true,
    pid,
    settings: `${serverVersion()} started by the bench on 127.0.0.1:${port} (initdb in the temp dir; defaults: fsync on, synchronous_commit on, shared_buffers 128MB; max_connections 200); a fresh database per scenario, dropped after`,
    ...databaseOps(adminUrl),
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        runOrThrow('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'], 'pg_ctl stop');
      } catch {
        killNow();
      }
    },
    killNow,
  };
}
