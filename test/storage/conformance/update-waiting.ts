/** Store conformance, updateWaitingTask (see ./index.ts). */
import { expect } from 'chai';
import { newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeUpdateWaiting(ctx: ConformanceContext): void {
  describe('updateWaitingTask', () => {
    it('a later time → SCHEDULED, due then; a time already past → PENDING, due now (not then); null → due now', async () => {
      await ctx.store().insertTasks([newTask('uw-a')]);
      const later = await ctx.store().updateWaitingTask('uw-a', { scheduledAt: T0 + 60_000 }, T0 + 10);
      expect(later.kind).to.equal('updated');
      expect(later.kind === 'updated' && later.task).to.include({ state: 'SCHEDULED', scheduledAt: T0 + 60_000, dueAt: T0 + 60_000 });
      expect(later.kind === 'updated' && later.entry).to.include({ dueAt: T0 + 60_000, state: 'SCHEDULED' });

      const past = await ctx.store().updateWaitingTask('uw-a', { scheduledAt: T0 - 86_400_000 }, T0 + 20);
      expect(past.kind === 'updated' && past.task).to.include({ state: 'PENDING', scheduledAt: T0 - 86_400_000, dueAt: T0 + 20 });
      expect(past.kind === 'updated' && past.entry).to.include({ dueAt: T0 + 20 });

      const now = await ctx.store().updateWaitingTask('uw-a', { scheduledAt: null }, T0 + 30);
      expect(now.kind === 'updated' && now.task).to.include({ state: 'PENDING', scheduledAt: null, dueAt: T0 + 30 });
    });

    it('priority and payload leave the schedule alone; a RUNNING task is a conflict; an unknown id is not found', async () => {
      await ctx.store().insertTasks([newTask('uw-b', { scheduledAt: T0 + 5_000 }), newTask('uw-run')]);
      const res = await ctx.store().updateWaitingTask('uw-b', { priority: 'high', payload: { v: 2 } }, T0 + 1);
      expect(res.kind === 'updated' && res.task).to.deep.include({
        state: 'SCHEDULED',
        dueAt: T0 + 5_000,
        priority: 'high',
        payload: { v: 2 },
      });
      await startTask(ctx.store(), 'uw-run', T0);
      const conflict = await ctx.store().updateWaitingTask('uw-run', { scheduledAt: T0 + 9_000 }, T0 + 2);
      expect(conflict.kind).to.equal('conflict');
      expect(conflict.kind === 'conflict' && conflict.task.state).to.equal('RUNNING');
      expect((await ctx.store().updateWaitingTask('uw-none', { priority: 'low' }, T0 + 3)).kind).to.equal('not_found');
    });
  });
}
