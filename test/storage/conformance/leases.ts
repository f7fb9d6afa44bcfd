/** Store conformance, attempt leases (see ./index.ts). */
import { expect } from 'chai';
import { completion, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeLeases(ctx: ConformanceContext): void {
  describe('extendLeases, findExpiredLeases', () => {
    it('a lease not extended expires; an extended one does not', async () => {
      await ctx.store().insertTasks([newTask('ls-a'), newTask('ls-b')]);
      await ctx.store().markPending(['ls-a', 'ls-b'], T0);
      await ctx.store().claimTasks(['ls-a', 'ls-b'], 'w', T0, 1000); // leases until T0 + 1000
      expect(await ctx.store().extendLeases([{ taskId: 'ls-b', attempt: 1 }], T0 + 5000)).to.equal(1);
      const expired = await ctx.store().findExpiredLeases(T0 + 2000, 10);
      expect(expired.map((o) => [o.taskId, o.attempt, o.workerId])).to.deep.equal([['ls-a', 1, 'w']]);
      expect(expired[0].retry).to.include({ maxRetries: 3 });
    });

    it("a lease sweep's completion (leaseExpiredBefore) is not applied once a heartbeat has moved the lease past that instant", async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('ls-r'), newTask('ls-s')]);
      await s.markPending(['ls-r', 'ls-s'], T0);
      await s.claimTasks(['ls-r', 'ls-s'], 'w', T0, 1000); // leases until T0 + 1000
      const found = await s.findExpiredLeases(T0 + 2000, 10);
      expect(found.map((o) => o.taskId).sort()).to.deep.equal(['ls-r', 'ls-s']);
      // A heartbeat of ls-r lands between the sweep's read and its write.
      expect(await s.extendLeases([{ taskId: 'ls-r', attempt: 1 }], T0 + 5000)).to.equal(1);
      const lost = (id: string) => ({ ...completion(id, 1, 'RETRYING'), retryAt: T0 + 2000, leaseExpiredBefore: T0 + 2000 });
      const out = await s.completeAttempts([lost('ls-r'), lost('ls-s')], T0 + 2000);
      expect(out.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
        ['ls-r', false, 'RUNNING'],
        ['ls-s', true, 'PENDING'],
      ]);
      expect((await s.getTask('ls-r'))?.state).to.equal('RUNNING');
      // Its lease ends unrenewed: the next sweep's completion applies.
      const later = await s.completeAttempts([{ ...lost('ls-r'), leaseExpiredBefore: T0 + 6000 }], T0 + 6000);
      expect(later[0]).to.include({ applied: true });
    });

    it('extending a stale attempt or a finished task does nothing', async () => {
      await ctx.store().insertTasks([newTask('ls-c')]);
      const attempt = await startTask(ctx.store(), 'ls-c', T0);
      expect(await ctx.store().extendLeases([{ taskId: 'ls-c', attempt: attempt + 1 }], T0 + 9000)).to.equal(0);
      await ctx.store().completeAttempts([completion('ls-c', attempt, 'SUCCEEDED')], T0 + 10);
      expect(await ctx.store().extendLeases([{ taskId: 'ls-c', attempt }], T0 + 9000)).to.equal(0);
      expect(await ctx.store().findExpiredLeases(T0 + 10_000_000, 10)).to.deep.equal([]);
    });
  });

  describe('heartbeatAttempts', () => {
    it('extends like extendLeases and names the extended attempts whose cancel was requested', async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('hb-a'), newTask('hb-b'), newTask('hb-c')]);
      const a = await startTask(s, 'hb-a', T0);
      const b = await startTask(s, 'hb-b', T0);
      const c = await startTask(s, 'hb-c', T0);
      expect(await s.heartbeatAttempts([{ taskId: 'hb-a', attempt: a }], T0 + 5000)).to.deep.equal({ extended: 1, cancelRequested: [] });
      expect((await s.cancelTask('hb-b', T0 + 10)).kind).to.equal('cancelling');
      await s.completeAttempts([completion('hb-c', c, 'SUCCEEDED')], T0 + 20);
      const beat = await s.heartbeatAttempts(
        [
          { taskId: 'hb-a', attempt: a },
          { taskId: 'hb-b', attempt: b },
          { taskId: 'hb-b', attempt: b + 1 }, // a stale attempt number: neither extended nor reported
          { taskId: 'hb-c', attempt: c }, // finished
          { taskId: 'hb-none', attempt: 1 },
        ],
        T0 + 9000,
      );
      expect(beat).to.deep.equal({ extended: 2, cancelRequested: [{ taskId: 'hb-b', attempt: b }] });
      // the cancelled attempt's lease was extended too (to T0 + 9000, like the other one)
      expect(await s.findExpiredLeases(T0 + 8000, 10)).to.deep.equal([]);
      expect((await s.findExpiredLeases(T0 + 10_000, 10)).map((o) => o.taskId).sort()).to.deep.equal(['hb-a', 'hb-b']);
      expect(await ctx.stateOf('hb-b')).to.equal('RUNNING');
    });
  });
}
