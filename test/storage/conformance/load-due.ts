/** Store conformance, loadDue (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, idOutsidePartition, idsInPartition, newTask, PARTITIONS, startTask, T0, taskError } from '../fixtures';
import { partitionOf } from '../../../src/domain/partition';
import { ConformanceContext } from './context';

export function describeLoadDue(ctx: ConformanceContext): void {
  describe('loadDue', () => {
    const P = 3;

    it('returns only waiting tasks of the partition due by `until`, in (dueAt, seq) order', async () => {
      const [a, b, c, d, run, ok, failed, dead, cancelled, retrying] = idsInPartition(P, 10, 'due');
      const elsewhere = idOutsidePartition(P);
      await ctx.store().insertTasks([newTask(a, { createdAt: T0, dueAt: T0 + 100 })]);
      await ctx.store().insertTasks([newTask(b, { createdAt: T0, scheduledAt: T0 + 50 })]); // SCHEDULED
      await ctx.store().insertTasks([newTask(c, { createdAt: T0, dueAt: T0 + 100 })]); // same dueAt as a, later seq
      await ctx.store().insertTasks([newTask(d, { createdAt: T0, scheduledAt: T0 + 301 })]); // after until
      await ctx.store().insertTasks([newTask(elsewhere, { createdAt: T0 })]); // other partition
      await ctx.store().insertTasks([newTask(run, { createdAt: T0 })]);
      await startTask(ctx.store(), run, T0);
      await finishedTask(ctx.store(), ok, 'SUCCEEDED', T0);
      await finishedTask(ctx.store(), failed, 'FAILED', T0);
      await finishedTask(ctx.store(), dead, 'DEAD', T0);
      await ctx.store().insertTasks([newTask(cancelled, { createdAt: T0 })]);
      await ctx.store().cancelTask(cancelled, T0);
      await ctx.store().insertTasks([newTask(retrying, { createdAt: T0 })]);
      const attempt = await startTask(ctx.store(), retrying, T0);
      await ctx
        .store()
        .completeAttempts([completion(retrying, attempt, 'RETRYING', { retryAt: T0 + 200, error: taskError('boom') })], T0 + 1);

      const due = await ctx.store().loadDue(P, T0 + 300, 100);
      expect(due.map((e) => e.id)).to.deep.equal([b, a, c, retrying]);
      expect(due.map((e) => e.state)).to.deep.equal(['SCHEDULED', 'PENDING', 'PENDING', 'RETRYING']);
      for (let i = 1; i < due.length; i++) {
        const [p, q] = [due[i - 1], due[i]];
        expect(p.dueAt < q.dueAt || (p.dueAt === q.dueAt && p.seq < q.seq), `order at ${i}`).to.equal(true);
      }
      expect(await ctx.store().loadDue(P, T0 + 1_000_000, 100)).to.have.length(5); // + d
    });

    it('treats `until` as inclusive and returns complete DueEntry fields', async () => {
      const [x] = idsInPartition(P, 1, 'incl');
      const t = newTask(x, { scheduledAt: T0 + 1000, priority: 'high', tenantId: 'tenant-z', taskType: 'sleep', queue: 'emails' });
      await ctx.store().insertTasks([t]);
      expect(await ctx.store().loadDue(P, T0 + 999, 10)).to.deep.equal([]);
      const due = await ctx.store().loadDue(P, T0 + 1000, 10);
      expect(due).to.have.length(1);
      const { seq, ...rest } = due[0];
      expect(seq).to.equal((await ctx.store().getTask(x))!.seq);
      expect(rest).to.deep.equal({
        id: x,
        partition: P,
        dueAt: T0 + 1000,
        priority: 'high',
        tenantId: 'tenant-z',
        taskType: 'sleep',
        state: 'SCHEDULED',
        queue: 'emails',
      });
    });

    it('respects the limit, taking the earliest first', async () => {
      const ids = idsInPartition(P, 6, 'lim');
      // Inserted in reverse due order: dueAt T0+60, T0+50, …, T0+10.
      for (let i = 0; i < ids.length; i++) {
        await ctx.store().insertTasks([newTask(ids[i], { createdAt: T0, dueAt: T0 + (ids.length - i) * 10 })]);
      }
      const due = await ctx.store().loadDue(P, T0 + 1000, 3);
      expect(due.map((e) => e.id)).to.deep.equal([ids[5], ids[4], ids[3]]);
      expect(await ctx.store().loadDue(P, T0 + 1000, 1)).to.have.length(1);
    });

    it("counts the limit in the partition's own tasks when other partitions' tasks share their due instant", async () => {
      // Submitted in turns over every partition, all due at one instant (a herd): the other
      // partitions' tasks come between this partition's in submission order.
      const mine = idsInPartition(P, 4, 'herd');
      const others = Array.from({ length: PARTITIONS }, (_, p) => (p === P ? [] : idsInPartition(p, 4, 'herd'))).flat();
      for (let i = 0; i < 4; i++) {
        const turn = [mine[i], ...others.filter((_, j) => j % 4 === i)];
        await ctx
          .store()
          .insertTasks(turn.map((id, j) => newTask(id, { createdAt: T0, scheduledAt: T0 + 500, ...(j % 2 ? {} : { priority: 'high' }) })));
      }
      await ctx.store().insertTasks([newTask('herd-now', { createdAt: T0 + 500 })]); // PENDING, due at the same instant
      const due = await ctx.store().loadDue(P, T0 + 500, 3);
      expect(due.map((e) => e.id)).to.deep.equal(mine.slice(0, 3));
      expect((await ctx.store().loadDue(P, T0 + 500, 100)).map((e) => e.id)).to.deep.equal(
        partitionOf('herd-now', PARTITIONS) === P ? [...mine, 'herd-now'] : mine,
      );
    });

    it('returns nothing for a partition without due tasks', async () => {
      const [x] = idsInPartition(P, 1, 'solo');
      await ctx.store().insertTasks([newTask(x)]);
      expect(await ctx.store().loadDue((P + 1) % PARTITIONS, T0 + 1_000_000, 100)).to.deep.equal([]);
    });
  });
}
