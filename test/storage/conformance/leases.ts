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

    it('extending a stale attempt or a finished task does nothing', async () => {
      await ctx.store().insertTasks([newTask('ls-c')]);
      const attempt = await startTask(ctx.store(), 'ls-c', T0);
      expect(await ctx.store().extendLeases([{ taskId: 'ls-c', attempt: attempt + 1 }], T0 + 9000)).to.equal(0);
      await ctx.store().completeAttempts([completion('ls-c', attempt, 'SUCCEEDED')], T0 + 10);
      expect(await ctx.store().extendLeases([{ taskId: 'ls-c', attempt }], T0 + 9000)).to.equal(0);
      expect(await ctx.store().findExpiredLeases(T0 + 10_000_000, 10)).to.deep.equal([]);
    });
  });
}
