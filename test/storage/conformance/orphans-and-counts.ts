/** Store conformance, findOrphanedAttempts and countByState (see ./index.ts). */
import { expect } from 'chai';
import { TASK_STATES } from '../../../src/domain/task';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeOrphansAndCounts(ctx: ConformanceContext): void {
  describe('findOrphanedAttempts', () => {
    it('returns the RUNNING tasks with their attempt, worker and retry settings', async () => {
      await ctx
        .store()
        .insertTasks([
          newTask('or-1', { retry: { maxRetries: 4, backoff: 'linear', delaySeconds: 2 } }),
          newTask('or-2', { retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 0.5 } }),
          newTask('or-pending'),
          newTask('or-sched', { scheduledAt: T0 + 1000 }),
        ]);
      await startTask(ctx.store(), 'or-1', T0, 'w-1');
      await ctx.store().completeAttempts([completion('or-1', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);
      await startTask(ctx.store(), 'or-1', T0 + 10, 'w-1b');
      await startTask(ctx.store(), 'or-2', T0, 'w-2');
      await finishedTask(ctx.store(), 'or-done', 'SUCCEEDED', T0);
      await ctx.store().insertTasks([newTask('or-retrying')]);
      await startTask(ctx.store(), 'or-retrying', T0);
      await ctx.store().completeAttempts([completion('or-retrying', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);

      const orphans = await ctx.store().findOrphanedAttempts(100);
      expect(orphans).to.have.deep.members([
        { taskId: 'or-1', attempt: 2, workerId: 'w-1b', retry: { maxRetries: 4, backoff: 'linear', delaySeconds: 2 } },
        { taskId: 'or-2', attempt: 1, workerId: 'w-2', retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 0.5 } },
      ]);
      expect(orphans).to.have.length(2);
    });

    it('respects the limit and returns nothing when nothing runs', async () => {
      expect(await ctx.store().findOrphanedAttempts(10)).to.deep.equal([]);
      const ids = ['ol-1', 'ol-2', 'ol-3'];
      await ctx.store().insertTasks(ids.map((id) => newTask(id)));
      await ctx.store().claimTasks(ids, 'w', T0, 1000);
      const some = await ctx.store().findOrphanedAttempts(2);
      expect(some).to.have.length(2);
      for (const o of some) expect(ids).to.include(o.taskId);
    });
  });

  // ------------------------------------------------------------------------------------------
  describe('countByState', () => {
    it('zero-fills every state on an empty store', async () => {
      const counts = await ctx.store().countByState();
      expect(counts).to.deep.equal(Object.fromEntries(TASK_STATES.map((s) => [s, 0])));
    });

    it('counts every state', async () => {
      await ctx
        .store()
        .insertTasks([
          newTask('cs-s1', { scheduledAt: T0 + 1000 }),
          newTask('cs-s2', { scheduledAt: T0 + 2000 }),
          newTask('cs-p1'),
          newTask('cs-p2'),
          newTask('cs-p3'),
          newTask('cs-r'),
          newTask('cs-rt'),
          newTask('cs-c'),
          newTask('cs-h', { state: 'OVERFLOW', priority: 'low' }),
        ]);
      await startTask(ctx.store(), 'cs-r', T0);
      await startTask(ctx.store(), 'cs-rt', T0);
      await ctx.store().completeAttempts([completion('cs-rt', 1, 'RETRYING', { retryAt: T0 + 100 })], T0 + 1);
      await ctx.store().cancelTask('cs-c', T0);
      await finishedTask(ctx.store(), 'cs-ok1', 'SUCCEEDED', T0);
      await finishedTask(ctx.store(), 'cs-ok2', 'SUCCEEDED', T0);
      await finishedTask(ctx.store(), 'cs-f', 'FAILED', T0);
      await finishedTask(ctx.store(), 'cs-d', 'DEAD', T0);

      expect(await ctx.store().countByState()).to.deep.equal({
        SCHEDULED: 2,
        PENDING: 3,
        RUNNING: 1,
        SUCCEEDED: 2,
        FAILED: 1,
        RETRYING: 1,
        DEAD: 1,
        CANCELLED: 1,
        BLOCKED: 0,
        OVERFLOW: 1,
      });
    });
  });
}
