/** Store conformance, markPending (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeMarkPending(ctx: ConformanceContext): void {
  describe('markPending', () => {
    it('moves SCHEDULED to PENDING only once due_at <= now', async () => {
      await ctx.store().insertTasks([newTask('mp-s', { scheduledAt: T0 + 1000 })]);
      expect(await ctx.store().markPending(['mp-s'], T0 + 999)).to.deep.equal([]);
      expect(await ctx.stateOf('mp-s')).to.equal('SCHEDULED');
      expect(await ctx.store().markPending(['mp-s'], T0 + 1000)).to.deep.equal(['mp-s']);
      const t = await ctx.store().getTask('mp-s');
      expect(t!.state).to.equal('PENDING');
      expect(t!.updatedAt).to.equal(T0 + 1000);
    });

    it('returns already-PENDING ids, and not unknown, cancelled, running or terminal ones', async () => {
      await ctx
        .store()
        .insertTasks([
          newTask('mp-pending'),
          newTask('mp-due', { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' }),
          newTask('mp-later', { scheduledAt: T0 + 5000 }),
          newTask('mp-cancelled', { scheduledAt: T0 + 10 }),
          newTask('mp-running'),
        ]);
      await ctx.store().cancelTask('mp-cancelled', T0);
      await startTask(ctx.store(), 'mp-running', T0);
      await finishedTask(ctx.store(), 'mp-done', 'SUCCEEDED', T0);

      const ids = ['mp-pending', 'mp-due', 'mp-later', 'mp-cancelled', 'mp-running', 'mp-done', 'mp-unknown'];
      const got = await ctx.store().markPending(ids, T0 + 100);
      expect(got).to.have.members(['mp-pending', 'mp-due']);
      expect(got).to.have.length(2);
      expect(await ctx.stateOf('mp-cancelled')).to.equal('CANCELLED');
      expect(await ctx.stateOf('mp-running')).to.equal('RUNNING');
      expect(await ctx.stateOf('mp-done')).to.equal('SUCCEEDED');
      expect(await ctx.stateOf('mp-later')).to.equal('SCHEDULED');
    });

    it('moves a RETRYING task to PENDING once its retry time has come', async () => {
      await ctx.store().insertTasks([newTask('mp-r')]);
      const attempt = await startTask(ctx.store(), 'mp-r', T0);
      await ctx.store().completeAttempts([completion('mp-r', attempt, 'RETRYING', { retryAt: T0 + 500 })], T0 + 10);
      expect(await ctx.store().markPending(['mp-r'], T0 + 499)).to.deep.equal([]);
      expect(await ctx.stateOf('mp-r')).to.equal('RETRYING');
      expect(await ctx.store().markPending(['mp-r'], T0 + 500)).to.deep.equal(['mp-r']);
      expect(await ctx.stateOf('mp-r')).to.equal('PENDING');
    });
  });
}
