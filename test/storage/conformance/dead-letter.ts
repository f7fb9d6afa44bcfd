/** Store conformance, dead-letter operations and the list filters they use (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeDeadLetter(ctx: ConformanceContext): void {
  describe('dead-letter: replayDead, deleteDead, list filters', () => {
    it('replayDead: DEAD → PENDING due now, a fresh retry budget, history kept', async () => {
      await finishedTask(ctx.store(), 'dl-1', 'DEAD', T0);
      const entry = await ctx.store().replayDead('dl-1', T0 + 100);
      expect(entry).to.include({ id: 'dl-1', state: 'PENDING', dueAt: T0 + 100 });
      const t = await ctx.store().getTask('dl-1');
      expect(t).to.include({ state: 'PENDING', attempts: 1, completedAt: null });
      expect(t!.retry.attemptBase).to.equal(1);
      const attempt = await startTask(ctx.store(), 'dl-1', T0 + 200);
      expect(attempt).to.equal(2);
      const [claimedAgain] = await ctx.store().completeAttempts([completion('dl-1', 2, 'SUCCEEDED', { result: 'ok' })], T0 + 300);
      expect(claimedAgain.applied).to.equal(true);
      const history = await ctx.store().getAttempts('dl-1');
      expect(history.map((a) => [a.attempt, a.outcome])).to.deep.equal([
        [1, 'DEAD'],
        [2, 'SUCCEEDED'],
      ]);
    });

    it('replayDead of a task that is not DEAD (or unknown) changes nothing and returns null', async () => {
      await finishedTask(ctx.store(), 'dl-ok', 'SUCCEEDED', T0);
      await ctx.store().insertTasks([newTask('dl-pending')]);
      expect(await ctx.store().replayDead('dl-ok', T0 + 1)).to.equal(null);
      expect(await ctx.store().replayDead('dl-pending', T0 + 1)).to.equal(null);
      expect(await ctx.store().replayDead('nope', T0 + 1)).to.equal(null);
      expect(await ctx.stateOf('dl-ok')).to.equal('SUCCEEDED');
      await finishedTask(ctx.store(), 'dl-twice', 'DEAD', T0);
      expect(await ctx.store().replayDead('dl-twice', T0 + 1)).to.not.equal(null);
      expect(await ctx.store().replayDead('dl-twice', T0 + 2)).to.equal(null);
    });

    it('deleteDead removes a DEAD task and its history; anything else stays', async () => {
      await finishedTask(ctx.store(), 'dl-del', 'DEAD', T0);
      await finishedTask(ctx.store(), 'dl-keep', 'FAILED', T0);
      expect(await ctx.store().deleteDead('dl-keep')).to.equal(false);
      expect(await ctx.store().deleteDead('dl-del')).to.equal(true);
      expect(await ctx.store().getTask('dl-del')).to.equal(null);
      expect(await ctx.store().getAttempts('dl-del')).to.deep.equal([]);
      expect(await ctx.store().deleteDead('dl-del')).to.equal(false);
      expect(await ctx.stateOf('dl-keep')).to.equal('FAILED');
    });

    it('listTasks filters by tenant and by completion time', async () => {
      await ctx.store().insertTasks([newTask('dl-a', { tenantId: 'acme' }), newTask('dl-b', { tenantId: 'other' })]);
      for (const [id, at] of [
        ['dl-a', T0],
        ['dl-b', T0 + 1000],
      ] as const) {
        const attempt = await startTask(ctx.store(), id, at);
        await ctx.store().completeAttempts([completion(id, attempt, 'DEAD')], at + 10);
      }
      const byTenant = await ctx.store().listTasks({ status: 'DEAD', tenantId: 'acme', limit: 10 });
      expect(byTenant.tasks.map((t) => t.id)).to.deep.equal(['dl-a']);
      const since = await ctx.store().listTasks({ status: 'DEAD', completedSince: T0 + 500, limit: 10 });
      expect(since.tasks.map((t) => t.id)).to.deep.equal(['dl-b']);
    });
  });
}
