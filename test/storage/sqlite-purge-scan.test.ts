/**
 * SQLite-specific: a retention pass reads only the oldest PURGE_SCAN_FACTOR × `limit` finished
 * tasks of each state by submission order (no index on completed_at: see ops/purge-finished.ts),
 * so its cost does not grow with the number of finished tasks kept. What that costs: an expired
 * task submitted after that many others still kept waits until they expire. Idempotency keys are
 * read through their expiry index (migration 017), oldest expiry first.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { PURGE_SCAN_FACTOR } from '../../src/storage/sqlite/ops/purge-finished';
import { openConnection } from '../../src/storage/sqlite/connection';
import { finishedTask, newTask, PARTITIONS, T0 } from './fixtures';

describe('SqliteStore purgeFinished: bounded scan of the oldest finished tasks', () => {
  let store: SqliteStore;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(PARTITIONS);
  });

  afterEach(() => store.close());

  it('an expired task behind PURGE_SCAN_FACTOR × limit older-submitted kept ones waits; it goes once they expire', async () => {
    const limit = 1;
    const kept = Array.from({ length: PURGE_SCAN_FACTOR * limit }, (_, i) => `ps-kept-${i}`);
    for (const id of kept) await finishedTask(store, id, 'SUCCEEDED', T0 + 1000); // completed at T0 + 1010
    await finishedTask(store, 'ps-expired', 'SUCCEEDED', T0); // submitted last, completed at T0 + 10
    expect(await store.purgeFinished(T0 + 100, T0 + 100, limit)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
    expect((await store.getTask('ps-expired'))?.state).to.equal('SUCCEEDED');

    // With one more in the scan (a larger limit) it is found at once.
    expect((await store.purgeFinished(T0 + 100, T0 + 100, limit + 1)).tasks).to.equal(1);
    expect(await store.getTask('ps-expired')).to.equal(null);
  });

  it('repeated passes of `limit` reach every expired task in submission order', async () => {
    const ids = Array.from({ length: 3 * PURGE_SCAN_FACTOR }, (_, i) => `ps-${i}`);
    for (const id of ids) await finishedTask(store, id, 'SUCCEEDED', T0);
    await finishedTask(store, 'ps-dead', 'DEAD', T0);
    let purged = 0;
    for (let pass = 0; pass < 100; pass++) {
      const r = await store.purgeFinished(T0 + 100, T0 + 100, 2);
      purged += r.tasks;
      if (r.tasks < 2) break;
    }
    expect(purged).to.equal(ids.length + 1);
    for (const id of [...ids, 'ps-dead']) expect(await store.getTask(id), id).to.equal(null);
  });

  it('deletes released idempotency keys oldest expiry first, whatever their tenant and key order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'purge-keys-'));
    const file = path.join(dir, 'scheduler.db');
    const keyed = new SqliteStore(file);
    try {
      await keyed.open(PARTITIONS);
      const task = (id: string, key: string, expiresAt: number) =>
        newTask(id, { idempotencyKey: key, idempotency: { requestHash: `h-${key}`, expiresAt } });
      // Primary-key order (tenant, key) is a, m, z; expiry order is z, a, m.
      await keyed.insertTasks([task('k-a', 'a', T0 + 200), task('k-m', 'm', T0 + 300), task('k-z', 'z', T0 + 100)]);
      expect((await keyed.purgeFinished(T0, T0 + 1_000, 1)).idempotencyKeys).to.equal(1);
      expect((await keyed.purgeFinished(T0, T0 + 1_000, 1)).idempotencyKeys).to.equal(1);
      const db = openConnection(file, { fileMustExist: true });
      try {
        expect(db.prepare('SELECT key FROM idempotency_keys').pluck().all()).to.deep.equal(['m']);
      } finally {
        db.close();
      }
    } finally {
      await keyed.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
