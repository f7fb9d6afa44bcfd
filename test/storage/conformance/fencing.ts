/**
 * Store conformance, fencing of a partition owner's writes by its lease epoch (cluster-store.ts,
 * store.ts markPending/claimTasks; see ./index.ts). The scenario throughout: owner A held the
 * partition at epoch 1, stalled (e.g. SIGSTOP) past its lease; B acquired epoch 2 and fenced the
 * partition; A wakes up and writes with epoch 1.
 */
import { expect } from 'chai';
import { idsInPartition, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

const P = 6;

export function describeFencing(ctx: ConformanceContext): void {
  describe('fencing (lease epochs)', () => {
    it('after fencePartition(2), markPending and claimTasks with epoch 1 change nothing', async () => {
      const s = ctx.store();
      const [due, pending, later] = idsInPartition(P, 3, 'fence');
      await s.insertTasks([
        newTask(due, { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' }),
        newTask(pending),
        newTask(later, { scheduledAt: T0 + 60_000 }),
      ]);
      expect(await s.fencePartition(P, 2)).to.equal(3);
      const before = await Promise.all([due, pending, later].map((id) => s.getTask(id)));

      expect(await s.markPending([due, pending, later], T0 + 100, 1)).to.deep.equal([]);
      expect(await s.claimTasks([pending, due], 'stale-worker', T0 + 100, 30_000, [1, 1])).to.deep.equal([]);

      const after = await Promise.all([due, pending, later].map((id) => s.getTask(id)));
      expect(after).to.deep.equal(before);
      expect(after.map((t) => t!.state)).to.deep.equal(['SCHEDULED', 'PENDING', 'SCHEDULED']);
    });

    it('the new epoch fires and claims them; the stale owner cannot claim what the new owner fired', async () => {
      const s = ctx.store();
      const [a, b] = idsInPartition(P, 2, 'fence-new');
      const [{ seq: seqA }] = await s.insertTasks([
        newTask(a, { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' }),
        newTask(b, { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' }),
      ]);
      await s.fencePartition(P, 2);
      expect(await s.markPending([a, b], T0, 2)).to.have.members([a, b]);
      expect(await s.claimTasks([a], 'stale', T0, 30_000, [1])).to.deep.equal([]);
      // Nor with a seq hint that finds the row: the fencing condition holds on that read too.
      expect(await s.claimTasks([a], 'stale', T0, 30_000, [1], [seqA])).to.deep.equal([]);
      // b's hint names a's row: b is still claimed, by its id.
      const claimed = await s.claimTasks([a, b], 'fresh', T0, 30_000, [2, 2], [seqA, seqA]);
      expect(claimed.map((c) => c.id)).to.have.members([a, b]);
      expect((await s.getTask(a))!.workerId).to.equal('fresh');
    });

    it("a stale owner's markPending stamps its epoch, so a later fence by the next owner still wins", async () => {
      const s = ctx.store();
      const [id] = idsInPartition(P, 1, 'fence-stamp');
      await s.insertTasks([newTask(id, { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' })]);
      // A (epoch 1) fires it before B fences: allowed, nobody newer held the partition yet
      expect(await s.markPending([id], T0, 1)).to.deep.equal([id]);
      await s.fencePartition(P, 2);
      // the PENDING task now belongs to epoch 2: A's dispatcher cannot claim it, B's can
      expect(await s.claimTasks([id], 'stale', T0 + 1, 30_000, [1])).to.deep.equal([]);
      expect(await s.markPending([id], T0 + 1, 1)).to.deep.equal([]);
      expect(await s.markPending([id], T0 + 1, 2)).to.deep.equal([id]);
      expect((await s.claimTasks([id], 'fresh', T0 + 2, 30_000, [2]))[0].attempt).to.equal(1);
    });

    it('a negative token never claims; fencePartition only raises unfinished tasks of its partition', async () => {
      const s = ctx.store();
      const [x, y, z] = idsInPartition(P, 3, 'fence-neg');
      const [other] = idsInPartition(P + 1, 1, 'fence-other');
      await s.insertTasks([newTask(x), newTask(y), newTask(z), newTask(other)]);
      expect(await s.claimTasks([x], 'w', T0, 30_000, [-1])).to.deep.equal([]);
      expect(await ctx.stateOf(x)).to.equal('PENDING');
      await startTask(s, y, T0); // RUNNING: raised too (its retry must not go back to the old epoch)
      await s.cancelTask(z, T0); // CANCELLED: finished, left alone
      expect(await s.fencePartition(P, 5)).to.equal(2);
      expect(await s.fencePartition(P, 5)).to.equal(0); // already at 5
      expect(await s.fencePartition(P, 4)).to.equal(0); // never lowers
      // the other partition is untouched: epoch 1 still fires and claims there
      expect((await s.claimTasks([other], 'w', T0, 30_000, [1])).map((c) => c.id)).to.deep.equal([other]);
    });

    it('without an epoch (embedded mode) nothing is fenced', async () => {
      const s = ctx.store();
      const [id] = idsInPartition(P, 1, 'fence-none');
      await s.insertTasks([newTask(id, { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' })]);
      await s.fencePartition(P, 9);
      expect(await s.markPending([id], T0)).to.deep.equal([id]);
      expect(await s.claimTasks([id], 'w', T0, 30_000)).to.have.length(1);
    });
  });
}
