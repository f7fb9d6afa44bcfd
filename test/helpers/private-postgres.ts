/**
 * A PostgreSQL server of a test's own: a cluster initialised in a temp folder on a free port, which
 * the test may stop and start again (an outage) without disturbing the shared server other tests
 * use (POSTGRES_URL). Debian's binaries (/usr/lib/postgresql/<newest>/bin, or PG_BINDIR);
 * initdb and pg_ctl refuse root, so when the tests run as root they run as the `postgres` user
 * (`runuser`), owning the data folder.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './service-process';
import { tempDir } from './temp-dir';

/** How a running server is stopped (`pg_ctl stop -m`): `fast` ends sessions cleanly, `immediate` is a crash (recovery at the next start). */
export type StopMode = 'smart' | 'fast' | 'immediate';

/** A private PostgreSQL server (see the file header). */
export interface PrivatePostgres {
  /** `postgres://scheduler@127.0.0.1:<port>/scheduler` (superuser `scheduler`, trust). */
  url: string;
  port: number;
  /** Stops the server (`pg_ctl stop -m <mode> -w`); resolves once it is down (the event loop keeps running meanwhile). */
  stop(mode: StopMode): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections (`pg_ctl start -w`). */
  start(): Promise<void>;
  /**
   * Sends `signal` to the server and every process of it (`SIGSTOP`: a server that holds its
   * connections open and answers nothing, as behind a lost network; `SIGCONT` resumes it).
   */
  signal(signal: NodeJS.Signals): void;
  /** Stops it (if running) and removes its folder. */
  remove(): void;
}

/** The newest installed PostgreSQL's bin folder, or PG_BINDIR. @throws Error when there is none */
export function postgresBinDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(a) - Number(b));
  if (versions.length === 0) throw new Error(`no PostgreSQL binaries under ${root} (set PG_BINDIR)`);
  return path.join(root, versions[versions.length - 1], 'bin');
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The command line of a PostgreSQL program (as `postgres` when we are root). */
function pgCommand(bin: string, program: string, args: string[]): [string, string[]] {
  const file = path.join(bin, program);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

/** Runs a PostgreSQL program and waits; its output is returned, a failure thrown with it. */
function pgRun(bin: string, program: string, args: string[]): string {
  const [cmd, argv] = pgCommand(bin, program, args);
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

/** Runs a PostgreSQL program without blocking the event loop; rejects with its output when it fails. */
function pgRunAsync(bin: string, program: string, args: string[]): Promise<void> {
  const [cmd, argv] = pgCommand(bin, program, args);
  return new Promise((resolve, reject) =>
    execFile(cmd, argv, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${program} failed: ${String(err)}\n${stdout}${stderr}`)) : resolve(),
    ),
  );
}

/**
 * Initialises and starts a private server (superuser `scheduler`, trust, loopback only, database
 * `scheduler`). Takes a few seconds (initdb).
 * @throws Error with initdb's or pg_ctl's output when either fails
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const dir = tempDir('scheduler-pg-');
  const data = path.join(dir.path, 'data');
  fs.mkdirSync(data);
  if (asRoot) {
    fs.chmodSync(dir.path, 0o711);
    execFileSync('chown', ['postgres', data]);
  }
  const port = await freePort();
  const log = path.join(data, 'server.log');
  pgRun(bin, 'initdb', ['-D', data, '-U', 'scheduler', '-A', 'trust', '--no-sync']);
  const opts = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off`;
  let running = false;
  const startArgs = ['-D', data, '-l', log, '-w', '-t', '60', '-o', opts, 'start'];
  const start = async () => {
    await pgRunAsync(bin, 'pg_ctl', startArgs);
    running = true;
  };
  const stop = async (mode: StopMode) => {
    await pgRunAsync(bin, 'pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    running = false;
  };
  pgRun(bin, 'pg_ctl', startArgs);
  running = true;
  pgRun(bin, 'createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'scheduler', 'scheduler']);
  const signal = (sig: NodeJS.Signals) => {
    const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return (
            Number(
              fs
                .readFileSync(`/proc/${d}/stat`, 'utf8')
                .replace(/^.*\) /s, '')
                .split(' ')[1],
            ) === postmaster
          );
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
    for (const pid of [postmaster, ...children]) {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone meanwhile */
      }
    }
  };
  return {
    url: `postgres://scheduler@127.0.0.1:${port}/scheduler`,
    port,
    stop,
    start,
    signal,
    remove() {
      if (running) {
        try {
          pgRun(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']);
        } catch {
          /* already down */
        }
      }
      dir.remove();
    },
  };
}
