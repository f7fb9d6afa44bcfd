/** Store conformance, auditScan: overdue waiting tasks and expired leases (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, idsInPartition, newTask, PARTITIONS, startTask, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';

export function describeAudit(ctx: ConformanceContext): void {
  describe('auditScan', () => {
    it('lists the waiting tasks of every partition due before `overdueBefore`, oldest first, with their total', async () => {
      // One SCHEDULED task and one PENDING task per partition, due in turns over the partitions.
      const ids = Array.from({ length: PARTITIONS }, (_, p) => idsInPartition(p, 2, 'overdue'));
      for (let p = 0; p < PARTITIONS; p++) {
        await ctx.store().insertTasks([newTask(ids[p][0], { createdAt: T0, scheduledAt: T0 + 10 + p })]);
        await ctx.store().insertTasks([newTask(ids[p][1], { createdAt: T0 + 5 })]);
      }
      const [retrying, running, later] = idsInPartition(1, 3, 'not-overdue');
      await ctx.store().insertTasks([newTask(retrying, { createdAt: T0 })]);
      const attempt = await startTask(ctx.store(), retrying, T0);
      await ctx
        .store()
        .completeAttempts([completion(retrying, attempt, 'RETRYING', { retryAt: T0 + 12, error: taskError('boom') })], T0 + 1);
      await ctx.store().insertTasks([newTask(running, { createdAt: T0 })]);
      await startTask(ctx.store(), running, T0);
      await ctx.store().insertTasks([newTask(later, { createdAt: T0, scheduledAt: T0 + 10_000 })]);
      await finishedTask(ctx.store(), 'overdue-done', 'SUCCEEDED', T0);

      const scan = await ctx.store().auditScan(T0 + 2, T0 + 100, 3);
      // Due T0+5 (PENDING, in submission order), then the SCHEDULED ones from T0+10 and the retry at T0+12.
      expect(scan.overdue.map((e) => e.id)).to.deep.equal([ids[0][1], ids[1][1], ids[2][1]]);
      expect(scan.overdueTotal).to.equal(2 * PARTITIONS + 1);
      const all = await ctx.store().auditScan(T0 + 2, T0 + 100, 100);
      expect(all.overdue.map((e) => e.id)).to.deep.equal([
        ...ids.map((pair) => pair[1]),
        ids[0][0],
        ids[1][0],
        ids[2][0], // due T0+12 like the retry, submitted before it
        retrying,
        ...ids.slice(3).map((pair) => pair[0]),
      ]);
      expect(all.overdue.find((e) => e.id === retrying)?.state).to.equal('RETRYING');
      expect((await ctx.store().auditScan(T0 + 2, T0 + 11, 100)).overdueTotal, 'due strictly before').to.equal(PARTITIONS + 1);
    });

    it('lists RUNNING attempts whose lease ended before `now`, with their total', async () => {
      const [a, b] = idsInPartition(2, 2, 'lease');
      await ctx.store().insertTasks([newTask(a, { createdAt: T0 }), newTask(b, { createdAt: T0 })]);
      await startTask(ctx.store(), a, T0, 'worker-a'); // lease 60 s
      await startTask(ctx.store(), b, T0 + 1_000, 'worker-b');
      expect((await ctx.store().auditScan(T0 + 60_000, T0, 10)).expiredLeasesTotal).to.equal(0);
      const scan = await ctx.store().auditScan(T0 + 60_500, T0, 10);
      expect(scan.expiredLeases).to.deep.equal([{ taskId: a, attempt: 1, workerId: 'worker-a', leaseExpiresAt: T0 + 60_000 }]);
      expect(scan.expiredLeasesTotal).to.equal(1);
      expect((await ctx.store().auditScan(T0 + 70_000, T0, 1)).expiredLeasesTotal).to.equal(2);
    });
  });
}
