/** Store conformance, purgeFinished: result retention and released idempotency keys (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, newTask, startTask, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';

const HOUR = 3_600_000;

export function describeRetention(ctx: ConformanceContext): void {
  describe('purgeFinished', () => {
    /** A task that failed once (a history row in its own right), then succeeded, at `at`. */
    async function retriedThenSucceeded(id: string, at: number): Promise<void> {
      await ctx.store().insertTasks([newTask(id)]);
      await startTask(ctx.store(), id, at);
      await ctx.store().completeAttempts([completion(id, 1, 'RETRYING', { retryAt: at, error: taskError('boom') })], at + 1);
      const attempt = await startTask(ctx.store(), id, at + 2);
      await ctx.store().completeAttempts([completion(id, attempt, 'SUCCEEDED', { result: { ok: 1 } })], at + 10);
    }

    it('deletes finished tasks of every terminal state completed before `before`, with their history', async () => {
      await retriedThenSucceeded('rt-ok', T0);
      expect(await ctx.store().getAttempts('rt-ok')).to.have.length(2);
      await finishedTask(ctx.store(), 'rt-failed', 'FAILED', T0);
      await finishedTask(ctx.store(), 'rt-dead', 'DEAD', T0);
      await ctx.store().insertTasks([newTask('rt-cancelled')]);
      await ctx.store().cancelTask('rt-cancelled', T0);
      const r = await ctx.store().purgeFinished(T0 + HOUR, T0 + HOUR, 100);
      expect(r).to.deep.equal({ tasks: 4, idempotencyKeys: 0 });
      for (const id of ['rt-ok', 'rt-failed', 'rt-dead', 'rt-cancelled']) {
        expect(await ctx.store().getTask(id), id).to.equal(null);
        expect(await ctx.store().getAttempts(id), id).to.deep.equal([]);
      }
      expect(await ctx.store().purgeFinished(T0 + HOUR, T0 + HOUR, 100)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
    });

    it('keeps tasks that completed at or after `before` (DEAD ones too: the dead-letter queue keeps them until then)', async () => {
      await finishedTask(ctx.store(), 'rt-old', 'SUCCEEDED', T0); // completed at T0 + 10
      await finishedTask(ctx.store(), 'rt-edge', 'DEAD', T0 + 90); // completed at T0 + 100
      await finishedTask(ctx.store(), 'rt-young', 'DEAD', T0 + 500);
      expect((await ctx.store().purgeFinished(T0 + 100, T0 + 1000, 100)).tasks).to.equal(1);
      expect(await ctx.store().getTask('rt-old')).to.equal(null);
      expect(await ctx.stateOf('rt-edge')).to.equal('DEAD');
      expect(await ctx.stateOf('rt-young')).to.equal('DEAD');
      expect(await ctx.store().getAttempts('rt-young')).to.have.length(1);
      const dead = await ctx.store().listTasks({ status: 'DEAD', limit: 10 });
      expect(dead.tasks.map((t) => t.id).sort()).to.deep.equal(['rt-edge', 'rt-young']);
    });

    it('never touches waiting or RUNNING tasks, however old (a replayed DEAD task included)', async () => {
      await ctx
        .store()
        .insertTasks([
          newTask('rt-pending'),
          newTask('rt-scheduled', { scheduledAt: T0 + 1000 }),
          newTask('rt-running'),
          newTask('rt-retrying'),
        ]);
      await startTask(ctx.store(), 'rt-running', T0);
      await startTask(ctx.store(), 'rt-retrying', T0);
      await ctx
        .store()
        .completeAttempts([completion('rt-retrying', 1, 'RETRYING', { retryAt: T0 + 10 * HOUR, error: taskError('x') })], T0 + 5);
      await finishedTask(ctx.store(), 'rt-replayed', 'DEAD', T0);
      expect(await ctx.store().replayDead('rt-replayed', T0 + 20)).to.not.equal(null);
      const far = T0 + 1000 * HOUR;
      expect(await ctx.store().purgeFinished(far, far, 100)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
      expect(await ctx.stateOf('rt-pending')).to.equal('PENDING');
      expect(await ctx.stateOf('rt-scheduled')).to.equal('SCHEDULED');
      expect(await ctx.stateOf('rt-running')).to.equal('RUNNING');
      expect(await ctx.stateOf('rt-retrying')).to.equal('RETRYING');
      expect(await ctx.stateOf('rt-replayed')).to.equal('PENDING');
      expect(await ctx.store().getAttempts('rt-retrying')).to.have.length(1);
      expect(await ctx.store().getAttempts('rt-replayed')).to.have.length(1);
    });

    it('deletes at most `limit` tasks per call; calling again finishes the job', async () => {
      const ids = ['rt-l1', 'rt-l2', 'rt-l3', 'rt-l4', 'rt-l5'];
      await ctx.store().insertTasks(ids.map((id) => newTask(id)));
      for (const id of ids) await ctx.store().cancelTask(id, T0);
      const before = T0 + 1;
      const counts: number[] = [];
      for (let i = 0; i < 4; i++) counts.push((await ctx.store().purgeFinished(before, T0, 2)).tasks);
      expect(counts).to.deep.equal([2, 2, 1, 0]);
      for (const id of ids) expect(await ctx.store().getTask(id)).to.equal(null);
      expect(await ctx.store().purgeFinished(before, T0, 0)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
    });

    it('deletes idempotency keys released by `now` (expires_at <= now), at most `limit`; held keys still answer', async () => {
      const keyed = (id: string, key: string, expiresAt: number) =>
        newTask(id, { idempotencyKey: key, idempotency: { requestHash: `h-${key}`, expiresAt } });
      await ctx.store().insertTasks([keyed('rk-1', 'a', T0 + 100), keyed('rk-2', 'b', T0 + 200), keyed('rk-3', 'c', T0 + 300)]);
      expect(await ctx.store().purgeFinished(T0, T0 + 99, 10)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
      expect(await ctx.store().purgeFinished(T0, T0 + 200, 1)).to.deep.equal({ tasks: 0, idempotencyKeys: 1 });
      expect(await ctx.store().purgeFinished(T0, T0 + 200, 10)).to.deep.equal({ tasks: 0, idempotencyKeys: 1 });
      expect(await ctx.store().purgeFinished(T0, T0 + 200, 10)).to.deep.equal({ tasks: 0, idempotencyKeys: 0 });
      // 'c' is still held: the same request at T0 + 250 is a replay of rk-3
      const again = newTask('rk-3b', {
        createdAt: T0 + 250,
        idempotencyKey: 'c',
        idempotency: { requestHash: 'h-c', expiresAt: T0 + 999 },
      });
      expect(await ctx.store().insertTasks([again])).to.deep.equal([{ taskId: 'rk-3', replayed: true, seq: 0 }]);
      // the tasks themselves are waiting: untouched
      for (const id of ['rk-1', 'rk-2', 'rk-3']) expect(await ctx.stateOf(id)).to.equal('PENDING');
    });
  });
}
