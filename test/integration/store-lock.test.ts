import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { StoreInUseError, StoreLock } from '../../src/storage/sqlite/store-lock';
import { tempDir } from '../helpers/temp-dir';
import pino from 'pino';
import { startScheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { skipOnPostgresServices } from '../helpers/service-store';

/**
 * A child process that takes the lock of `file`, says "held", and waits to be killed. It keeps the
 * lock referenced: an unreferenced one is closed when it is garbage-collected (the driver's
 * finalizer), which a young-generation collection right after start-up did on Node 22 in CI.
 */
function holderProcess(file: string) {
  const lockModule = path.resolve(__dirname, '..', '..', 'src', 'storage', 'sqlite', 'store-lock.js');
  const child = spawn(
    process.execPath,
    [
      '-e',
      `globalThis.held = require(${JSON.stringify(lockModule)}).StoreLock.acquire(${JSON.stringify(file)}); console.log('held'); setInterval(() => {}, 1000);`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const held = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('held') && resolve());
    child.once('exit', (code) => reject(new Error(`holder exited (${code})`)));
  });
  return { child, held };
}

/** One service per embedded store file: the companion lock (storage/sqlite/store-lock.ts). */
describe('embedded store lock: one service per SQLite file', function () {
  if (skipOnPostgresServices('the lock of the SQLite file')) return;
  this.timeout(30_000);
  const dir = tempDir();
  after(() => dir.remove());

  it('a second holder in the same process is refused, until the first releases it', () => {
    const file = path.join(dir.path, 'same', 'a.db'); // the folder does not exist yet
    const first = StoreLock.acquire(file);
    expect(() => StoreLock.acquire(file)).to.throw(StoreInUseError, /a\.db is in use by another running scheduler/);
    first.release();
    first.release(); // idempotent
    StoreLock.acquire(file).release();
  });

  it('a lock held by another process refuses; once that process is SIGKILLed the lock is free (never stale)', async () => {
    const file = path.join(dir.path, 'b.db');
    const { child, held } = holderProcess(file);
    await held;
    try {
      expect(() => StoreLock.acquire(file)).to.throw(StoreInUseError);
    } finally {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    StoreLock.acquire(file).release();
  });
  it('a second scheduler on the same file does not start (nothing of the first is touched); after the first closes it does', async () => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { sqlitePath: path.join(dir.path, 'c.db'), logLevel: 'silent', workers: 1, workerConcurrency: 2, partitions: 4 },
    });
    const logger = pino({ level: 'silent' });
    const first = await startScheduler(config, { logger });
    try {
      const { task_id } = await first.service.submit({ task_type: 'noop' });
      let refused: unknown = null;
      await startScheduler(config, { logger }).then(
        (s) => s.close(),
        (err: unknown) => (refused = err),
      );
      expect(refused).to.be.instanceOf(StoreInUseError);
      expect(await first.service.get(task_id)).to.include({ task_id }); // the first still serves
    } finally {
      await first.close();
    }
    const second = await startScheduler(config, { logger });
    await second.close();
  });
});
