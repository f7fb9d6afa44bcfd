/** Store conformance, concurrency keys: the limits per key and the key of each task (see ./index.ts). */
import { expect } from 'chai';
import { completion, idsInPartition, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeConcurrencyLimits(ctx: ConformanceContext): void {
  describe('concurrency limits', () => {
    it('sets, replaces, lists by key and removes limits (removing an unset key does nothing)', async () => {
      const s = ctx.store();
      expect(await s.listConcurrencyLimits()).to.deep.equal([]);
      await s.putConcurrencyLimit('host:b.example', 3, T0);
      await s.putConcurrencyLimit('host:a.example', 10, T0);
      await s.putConcurrencyLimit('host:b.example', 5, T0 + 1);
      expect(await s.listConcurrencyLimits()).to.deep.equal([
        { key: 'host:a.example', maxRunning: 10, updatedAt: T0 },
        { key: 'host:b.example', maxRunning: 5, updatedAt: T0 + 1 },
      ]);
      await s.putConcurrencyLimit('host:a.example', null, T0 + 2);
      await s.putConcurrencyLimit('never-set', null, T0 + 2);
      expect(await s.listConcurrencyLimits()).to.deep.equal([{ key: 'host:b.example', maxRunning: 5, updatedAt: T0 + 1 }]);
    });

    it("keeps a task's concurrency key: in its record, its due entry, and the entry of its retry", async () => {
      const s = ctx.store();
      const [keyed, plain] = idsInPartition(0, 2, 'ck');
      await s.insertTasks([
        newTask(keyed, { concurrencyKey: 'tenant-42', retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 0 } }),
        newTask(plain),
      ]);
      expect((await s.getTask(keyed))?.concurrencyKey).to.equal('tenant-42');
      expect((await s.getTask(plain))?.concurrencyKey ?? null).to.equal(null);
      const due = await s.loadDue(0, T0, 10);
      expect(due.find((e) => e.id === keyed)?.concurrencyKey).to.equal('tenant-42');
      expect(due.find((e) => e.id === plain)).to.not.have.property('concurrencyKey');
      const attempt = await startTask(s, keyed, T0);
      const [res] = await s.completeAttempts([{ ...completion(keyed, attempt, 'RETRYING'), retryAt: T0 }], T0 + 1);
      expect(res.entry?.concurrencyKey).to.equal('tenant-42');
    });
  });
}
