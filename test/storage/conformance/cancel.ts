/** Store conformance, cancelTask (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeCancel(ctx: ConformanceContext): void {
  describe('cancelTask', () => {
    for (const waiting of ['SCHEDULED', 'PENDING', 'RETRYING'] as const) {
      it(`cancels a ${waiting} task at once`, async () => {
        const id = `cx-${waiting.toLowerCase()}`;
        await ctx.store().insertTasks([newTask(id, waiting === 'SCHEDULED' ? { scheduledAt: T0 + 60_000 } : {})]);
        if (waiting === 'RETRYING') {
          const attempt = await startTask(ctx.store(), id, T0);
          await ctx.store().completeAttempts([completion(id, attempt, 'RETRYING', { retryAt: T0 + 500 })], T0 + 1);
        }
        expect(await ctx.stateOf(id)).to.equal(waiting);
        const r = await ctx.store().cancelTask(id, T0 + 10);
        expect(r.kind).to.equal('cancelled');
        if (r.kind !== 'cancelled') return;
        expect(r.task.id).to.equal(id);
        expect(r.task.state).to.equal('CANCELLED');
        const t = await ctx.store().getTask(id);
        expect(t!.state).to.equal('CANCELLED');
        expect(t!.updatedAt).to.equal(T0 + 10);
        expect(await ctx.store().markPending([id], T0 + 1_000_000)).to.deep.equal([]);
        expect(await ctx.store().claimTasks([id], 'w', T0 + 1_000_000, 1000)).to.deep.equal([]);
        expect(await ctx.store().loadDue(t!.partition, T0 + 1_000_000, 100)).to.deep.equal([]);
        expect(await ctx.stateOf(id)).to.equal('CANCELLED');
      });
    }

    it('marks a RUNNING task as cancelling (cancelRequested) without ending it', async () => {
      await ctx.store().insertTasks([newTask('cx-run')]);
      await startTask(ctx.store(), 'cx-run', T0);
      const r = await ctx.store().cancelTask('cx-run', T0 + 3);
      expect(r.kind).to.equal('cancelling');
      if (r.kind !== 'cancelling') return;
      expect(r.task.state).to.equal('RUNNING');
      expect(r.task.cancelRequested).to.equal(true);
      const t = await ctx.store().getTask('cx-run');
      expect(t!.state).to.equal('RUNNING');
      expect(t!.cancelRequested).to.equal(true);
      const again = await ctx.store().cancelTask('cx-run', T0 + 4);
      expect(again.kind).to.equal('cancelling');
    });

    for (const terminal of ['SUCCEEDED', 'FAILED', 'DEAD'] as const) {
      it(`answers conflict with the state for a ${terminal} task`, async () => {
        const id = `cx-${terminal.toLowerCase()}`;
        await finishedTask(ctx.store(), id, terminal, T0);
        const before = await ctx.store().getTask(id);
        const r = await ctx.store().cancelTask(id, T0 + 100);
        expect(r.kind).to.equal('conflict');
        if (r.kind !== 'conflict') return;
        expect(r.task.state).to.equal(terminal);
        expect(await ctx.store().getTask(id)).to.deep.equal(before);
      });
    }

    it('answers conflict for a task that is already CANCELLED', async () => {
      await ctx.store().insertTasks([newTask('cx-twice')]);
      await ctx.store().cancelTask('cx-twice', T0);
      const r = await ctx.store().cancelTask('cx-twice', T0 + 1);
      expect(r.kind).to.equal('conflict');
      if (r.kind === 'conflict') expect(r.task.state).to.equal('CANCELLED');
    });

    it('answers not_found for an unknown id', async () => {
      expect(await ctx.store().cancelTask('cx-nobody', T0)).to.deep.equal({ kind: 'not_found' });
    });
  });
}
