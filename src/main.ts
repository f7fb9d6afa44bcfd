import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { startScheduler } from './bootstrap';
import { loadConfig } from './config';
import { StartupError } from './domain/startup-error';
import { assertSafeExposure } from './tenancy/exposure';
import { nodeSupportWarning } from './node-support';
import { openFilesRefusal, readOpenFiles } from './observability/open-files-watch';
import { poolSpecs } from './actors/dispatcher/pool-specs';

/** A second signal this soon after the first (ms) is the same stop delivered twice, not a demand to exit now. */
const REPEATED_SIGNAL_MS = 1000;

/**
 * Entry point (`npm start`): reads config, starts store, actors and HTTP on HOST:PORT; SIGINT and
 * SIGTERM shut down gracefully (running attempts get `shutdownGraceMs`; the last log line is
 * `stopped`, exit 0), a second signal exits at once (a warning line, exit 1), unless it comes
 * within {@link REPEATED_SIGNAL_MS} of the first: under `npm start` a Ctrl-C reaches the service
 * twice (the terminal signals the whole process group, and npm, its parent, passes its own copy on).
 * Invalid configuration stops start-up with one line naming the key, exit code 78 (EX_CONFIG).
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
    assertSafeExposure(config);
  } catch (err) {
    exitIfStartupError(err);
    throw err;
  }
  // HOST checked before the store is opened: a name that does not resolve, or an address no
  // interface has, is refused without a store file created or migrated for a service that never listened.
  const unresolved = await hostRefusal(config.host, config.port);
  if (unresolved) exitIfStartupError(new StartupError(unresolved));
  const processes = poolSpecs(config).reduce((sum, pool) => sum + pool.processes, 0);
  const tooFewFiles = openFilesRefusal(readOpenFiles(), processes, config.store !== 'sqlite');
  if (tooFewFiles) exitIfStartupError(new StartupError(tooFewFiles));
  let scheduler;
  try {
    scheduler = await startScheduler(config, { globalTracing: true });
  } catch (err) {
    exitIfStartupError(err);
    throw err;
  }
  let address: string;
  try {
    address = await scheduler.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The port taken or not ours to bind: one line, as for any start-up refusal, after the store
    // and the workers are closed again (the store's lock released for the next start).
    const cause = listenRefusal(err, config.host, config.port);
    if (!cause) throw err;
    await scheduler.close().catch(() => undefined);
    exitIfStartupError(new StartupError(cause));
    throw err;
  }
  scheduler.log.info(
    { address, store: scheduler.store.name, workers: config.workers, partitions: config.partitions },
    'scheduler listening',
  );
  const unsupported = nodeSupportWarning(process.versions.node);
  if (unsupported) scheduler.log.warn({ node: process.versions.node }, unsupported);
  let stoppingSince: bigint | null = null;
  const stop = (signal: string) => {
    if (stoppingSince !== null) {
      if (process.hrtime.bigint() - stoppingSince < BigInt(REPEATED_SIGNAL_MS) * 1_000_000n) {
        scheduler.log.info(
          { signal },
          "signal repeated within 1 s (npm passes on the terminal's): still stopping gracefully; send it again to exit now",
        );
        return;
      }
      // pino writes stdout synchronously, so the line is out before the exit.
      scheduler.log.warn({ signal }, 'second signal: exiting now; attempts still running will run again after restart');
      process.exit(1);
    }
    const since = process.hrtime.bigint();
    stoppingSince = since;
    scheduler.log.info({ signal }, 'shutting down');
    scheduler
      .close()
      .then(() => {
        scheduler.log.info({ signal, shutdown_ms: Number((process.hrtime.bigint() - since) / 1_000_000n) }, 'stopped');
        process.exit(0);
      })
      .catch((err) => {
        scheduler.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** Why the HTTP server could not listen, in one line naming HOST and PORT; null for another error. */
function listenRefusal(err: unknown, host: string, port: number): string | null {
  const code = (err as { code?: unknown })?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the port is in use by another process (set PORT, or stop that process)`;
  if (code === 'EACCES') return `cannot listen on ${where}: not permitted (a port below 1024 needs privileges; set PORT)`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no interface of this machine has that address (set HOST)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_FAIL')
    return `cannot listen on ${where}: the host name does not resolve (${String(code)}; set HOST to an address or a name this machine resolves)`;
  return null;
}

/**
 * Why HOST cannot be listened on (as {@link listenRefusal}: a name that does not resolve, an address
 * no interface has), found with a throwaway listener on a port the system picks; null when it can.
 * Whether PORT itself is free is found at the real listen (another process may take it meanwhile).
 */
async function hostRefusal(host: string, port: number): Promise<string | null> {
  try {
    await lookup(host);
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, host, () => probe.close(() => resolve()));
    });
    return null;
  } catch (err) {
    return listenRefusal(err, host, port);
  }
}

/** A {@link StartupError} (configuration, store, handler modules): its message as one line, its exit code. */
function exitIfStartupError(err: unknown): void {
  if (!(err instanceof StartupError)) return;
  process.stderr.write(`${err.message}\n`);
  process.exit(err.exitCode);
}

/**
 * The line for an error that ended start-up and is no {@link StartupError}: its stack (or, for a
 * thrown value that is no Error, such as a store thread's `{code}`, its inspection rather than
 * `[object Object]`), with the fix when the open-files limit was the cause (EMFILE, ENFILE).
 */
function startFailure(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? String(err)) : inspect(err);
  const limit = /\bE[MN]FILE\b/.test(text) ? '\n(the open-files limit was reached: raise it, ulimit -n or LimitNOFILE=)' : '';
  return `scheduler failed to start: ${text}${limit}\n`;
}

main().catch((err) => {
  process.stderr.write(startFailure(err));
  process.exit(1);
});
