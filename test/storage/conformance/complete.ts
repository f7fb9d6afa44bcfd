/** Store conformance, completeAttempts (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, idsInPartition, newTask, startTask, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';

export function describeComplete(ctx: ConformanceContext): void {
  describe('completeAttempts', () => {
    it('SUCCEEDED stores result, durationMs and completedAt', async () => {
      await ctx.store().insertTasks([newTask('ca-ok', { taskType: 'echo' })]);
      const attempt = await startTask(ctx.store(), 'ca-ok', T0);
      const result = { echoed: { text: 'héllo 🌍', list: [1, null] } };
      const [r] = await ctx.store().completeAttempts([completion('ca-ok', attempt, 'SUCCEEDED', { result, durationMs: 123 })], T0 + 200);
      expect(r.taskId).to.equal('ca-ok');
      expect(r.applied).to.equal(true);
      expect(r.state).to.equal('SUCCEEDED');
      expect(r.taskType).to.equal('echo');
      expect(r.entry).to.equal(null); // final: nothing waits again
      const t = await ctx.store().getTask('ca-ok');
      expect(t!.state).to.equal('SUCCEEDED');
      expect(t!.result).to.deep.equal(result);
      expect(t!.durationMs).to.equal(123);
      expect(t!.completedAt).to.equal(T0 + 200);
      expect(t!.updatedAt).to.equal(T0 + 200);
      expect(t!.error).to.equal(null);
      expect(t!.attempts).to.equal(1);
    });

    it('ignores a duplicate completion of the same attempt (applied: false, state unchanged)', async () => {
      await ctx.store().insertTasks([newTask('ca-dup')]);
      const attempt = await startTask(ctx.store(), 'ca-dup', T0);
      await ctx.store().completeAttempts([completion('ca-dup', attempt, 'SUCCEEDED', { result: 'first', durationMs: 10 })], T0 + 10);
      const before = await ctx.store().getTask('ca-dup');

      const [again] = await ctx.store().completeAttempts([completion('ca-dup', attempt, 'SUCCEEDED', { result: 'second' })], T0 + 20);
      expect(again.applied).to.equal(false);
      expect(again.state).to.equal('SUCCEEDED');
      const [asFailure] = await ctx
        .store()
        .completeAttempts([completion('ca-dup', attempt, 'FAILED', { error: taskError('late', 'Error', false) })], T0 + 30);
      expect(asFailure.applied).to.equal(false);
      expect(asFailure.state).to.equal('SUCCEEDED');

      expect(await ctx.store().getTask('ca-dup')).to.deep.equal(before);
      expect(await ctx.store().getAttempts('ca-dup')).to.have.length(1);
    });

    it('ignores a stale attempt number', async () => {
      await ctx.store().insertTasks([newTask('ca-stale')]);
      await startTask(ctx.store(), 'ca-stale', T0);
      const [future] = await ctx.store().completeAttempts([completion('ca-stale', 2, 'SUCCEEDED')], T0 + 1);
      expect(future.applied).to.equal(false);
      expect(future.state).to.equal('RUNNING');
      await ctx.store().completeAttempts([completion('ca-stale', 1, 'RETRYING', { retryAt: T0 + 5 })], T0 + 2);
      await startTask(ctx.store(), 'ca-stale', T0 + 5);
      const [late] = await ctx.store().completeAttempts([completion('ca-stale', 1, 'SUCCEEDED', { result: 'late' })], T0 + 6);
      expect(late.applied).to.equal(false);
      expect(late.state).to.equal('RUNNING');
      const t = await ctx.store().getTask('ca-stale');
      expect(t!.state).to.equal('RUNNING');
      expect(t!.attempts).to.equal(2);
      expect(t!.result).to.equal(null);
    });

    it('reports applied: false with state null for an unknown task', async () => {
      const [r] = await ctx.store().completeAttempts([completion('ca-ghost', 1, 'SUCCEEDED')], T0);
      expect(r.taskId).to.equal('ca-ghost');
      expect(r.applied).to.equal(false);
      expect(r.state).to.equal(null);
      expect(r.entry).to.equal(null);
    });

    it('RETRYING sets dueAt = retryAt, returns a due entry and makes the task due again', async () => {
      const [id] = idsInPartition(5, 1, 'ca-retry');
      await ctx.store().insertTasks([newTask(id, { priority: 'low', tenantId: 'tenant-r', taskType: 'fail' })]);
      const attempt = await startTask(ctx.store(), id, T0);
      const err = taskError('connection reset', 'ECONNRESET');
      const [r] = await ctx
        .store()
        .completeAttempts([completion(id, attempt, 'RETRYING', { retryAt: T0 + 2000, error: err, durationMs: 40 })], T0 + 50);
      expect(r.applied).to.equal(true);
      expect(r.state).to.equal('RETRYING');
      expect(r.entry).to.not.equal(null);
      const { seq, ...entry } = r.entry!;
      expect(seq).to.equal((await ctx.store().getTask(id))!.seq);
      expect(entry).to.deep.equal({
        id,
        partition: 5,
        dueAt: T0 + 2000,
        priority: 'low',
        tenantId: 'tenant-r',
        taskType: 'fail',
        state: 'RETRYING',
        queue: 'default',
      });

      const t = await ctx.store().getTask(id);
      expect(t!.state).to.equal('RETRYING');
      expect(t!.dueAt).to.equal(T0 + 2000);
      expect(t!.error).to.deep.equal(err);
      expect(t!.completedAt).to.equal(null);
      expect(await ctx.store().loadDue(5, T0 + 1999, 10)).to.deep.equal([]);
      expect((await ctx.store().loadDue(5, T0 + 2000, 10)).map((e) => e.id)).to.deep.equal([id]);
    });

    it('RETRYING becomes CANCELLED when a cancel was requested during the attempt', async () => {
      const [id] = idsInPartition(2, 1, 'ca-rc');
      await ctx.store().insertTasks([newTask(id)]);
      const attempt = await startTask(ctx.store(), id, T0);
      expect((await ctx.store().cancelTask(id, T0 + 5)).kind).to.equal('cancelling');
      const [r] = await ctx
        .store()
        .completeAttempts([completion(id, attempt, 'RETRYING', { retryAt: T0 + 1000, error: taskError('aborted', 'cancelled') })], T0 + 10);
      expect(r.applied).to.equal(true);
      expect(r.state).to.equal('CANCELLED');
      const t = await ctx.store().getTask(id);
      expect(t!.state).to.equal('CANCELLED');
      expect(t!.completedAt).to.equal(T0 + 10);
      expect(await ctx.store().loadDue(2, T0 + 1_000_000, 10)).to.deep.equal([]);
      expect(await ctx.store().claimTasks([id], 'w', T0 + 2000, 1000)).to.deep.equal([]);
      const history = await ctx.store().getAttempts(id);
      expect(history.map((h) => h.outcome)).to.deep.equal(['CANCELLED']);
    });

    it('a free retry (freeRetry) moves the budget on by one: the attempt is not counted, and the next one is claimed with it', async () => {
      await ctx.store().insertTasks([newTask('ca-free', { retry: { maxRetries: 0, backoff: 'fixed', delaySeconds: 1 } })]);
      const attempt = await startTask(ctx.store(), 'ca-free', T0);
      const recycled = taskError('worker process killed to stop another attempt', 'worker_recycled');
      const [r] = await ctx
        .store()
        .completeAttempts([completion('ca-free', attempt, 'RETRYING', { retryAt: T0 + 10, error: recycled, freeRetry: true })], T0 + 10);
      expect(r).to.include({ applied: true, state: 'PENDING' });
      const t = await ctx.store().getTask('ca-free');
      expect(t!.attempts).to.equal(1);
      expect(t!.retry.attemptBase).to.equal(1);
      const [claimed] = await ctx.store().claimTasks(['ca-free'], 'worker-2', T0 + 20, 60_000);
      expect(claimed.attempt).to.equal(2);
      expect(claimed.retry.attemptBase).to.equal(1);
      expect((await ctx.store().getAttempts('ca-free'))[0]).to.deep.include({ attempt: 1, outcome: 'RETRYING', error: recycled });
      // An ordinary retry leaves the budget where it is.
      await ctx.store().completeAttempts([completion('ca-free', 2, 'RETRYING', { retryAt: T0 + 30, error: recycled })], T0 + 30);
      expect((await ctx.store().getTask('ca-free'))!.retry.attemptBase).to.equal(1);
    });

    it('SUCCEEDED wins over a cancel requested during the attempt', async () => {
      await ctx.store().insertTasks([newTask('ca-race')]);
      const attempt = await startTask(ctx.store(), 'ca-race', T0);
      await ctx.store().cancelTask('ca-race', T0 + 1);
      const [r] = await ctx.store().completeAttempts([completion('ca-race', attempt, 'SUCCEEDED', { result: 42 })], T0 + 2);
      expect(r.applied).to.equal(true);
      expect(r.state).to.equal('SUCCEEDED');
      expect((await ctx.store().getTask('ca-race'))!.result).to.equal(42);
    });

    it('FAILED, DEAD and CANCELLED targets are terminal and keep the error', async () => {
      await ctx.store().insertTasks([newTask('ca-f'), newTask('ca-d'), newTask('ca-c')]);
      for (const id of ['ca-f', 'ca-d', 'ca-c']) await startTask(ctx.store(), id, T0);
      const results = await ctx
        .store()
        .completeAttempts(
          [
            completion('ca-f', 1, 'FAILED', { error: taskError('bad input', 'PermanentError', false) }),
            completion('ca-d', 1, 'DEAD', { error: taskError('gave up', 'Error', true) }),
            completion('ca-c', 1, 'CANCELLED', { error: taskError('aborted', 'cancelled', false) }),
          ],
          T0 + 30,
        );
      expect(results.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
        ['ca-f', true, 'FAILED'],
        ['ca-d', true, 'DEAD'],
        ['ca-c', true, 'CANCELLED'],
      ]);
      const f = await ctx.store().getTask('ca-f');
      expect(f!.error).to.deep.equal(taskError('bad input', 'PermanentError', false));
      expect(f!.completedAt).to.equal(T0 + 30);
      expect((await ctx.store().getTask('ca-d'))!.state).to.equal('DEAD');
      expect((await ctx.store().getTask('ca-c'))!.state).to.equal('CANCELLED');
      for (const id of ['ca-f', 'ca-d', 'ca-c']) {
        expect(await ctx.store().markPending([id], T0 + 1_000_000), id).to.deep.equal([]);
      }
    });

    it('answers a batch in input order, applying each completion on its own', async () => {
      await ctx.store().insertTasks([newTask('ca-b1'), newTask('ca-b2')]);
      await startTask(ctx.store(), 'ca-b1', T0);
      await startTask(ctx.store(), 'ca-b2', T0);
      const results = await ctx
        .store()
        .completeAttempts(
          [
            completion('ca-b2', 1, 'SUCCEEDED'),
            completion('ca-missing', 1, 'SUCCEEDED'),
            completion('ca-b1', 9, 'SUCCEEDED'),
            completion('ca-b1', 1, 'FAILED', { error: taskError('x', 'Error', false) }),
          ],
          T0 + 5,
        );
      expect(results.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
        ['ca-b2', true, 'SUCCEEDED'],
        ['ca-missing', false, null],
        ['ca-b1', false, 'RUNNING'],
        ['ca-b1', true, 'FAILED'],
      ]);
    });

    it('keeps one attempt-history row per finished attempt, in order, with outcome and error', async () => {
      await ctx.store().insertTasks([newTask('ca-hist', { retry: { maxRetries: 2, backoff: 'fixed', delaySeconds: 1 } })]);
      const e1 = taskError('timeout after 30s', 'timeout');
      const e2 = taskError('worker lost', 'worker_lost');
      const e3 = taskError('boom', 'Error');

      await startTask(ctx.store(), 'ca-hist', T0 + 0, 'w-a');
      await ctx.store().completeAttempts([completion('ca-hist', 1, 'RETRYING', { retryAt: T0 + 1000, error: e1 })], T0 + 100);
      await startTask(ctx.store(), 'ca-hist', T0 + 1000, 'w-b');
      await ctx.store().completeAttempts([completion('ca-hist', 2, 'RETRYING', { retryAt: T0 + 2000, error: e2 })], T0 + 1100);
      // A duplicate of attempt 2's completion must not add a row.
      await ctx.store().completeAttempts([completion('ca-hist', 2, 'RETRYING', { retryAt: T0 + 2000, error: e2 })], T0 + 1150);
      await startTask(ctx.store(), 'ca-hist', T0 + 2000, 'w-c');
      await ctx.store().completeAttempts([completion('ca-hist', 3, 'DEAD', { error: e3 })], T0 + 2100);

      expect(await ctx.store().getAttempts('ca-hist')).to.deep.equal([
        { taskId: 'ca-hist', attempt: 1, workerId: 'w-a', startedAt: T0, endedAt: T0 + 100, outcome: 'RETRYING', error: e1 },
        { taskId: 'ca-hist', attempt: 2, workerId: 'w-b', startedAt: T0 + 1000, endedAt: T0 + 1100, outcome: 'RETRYING', error: e2 },
        { taskId: 'ca-hist', attempt: 3, workerId: 'w-c', startedAt: T0 + 2000, endedAt: T0 + 2100, outcome: 'DEAD', error: e3 },
      ]);
      const t = await ctx.store().getTask('ca-hist');
      expect(t!.state).to.equal('DEAD');
      expect(t!.attempts).to.equal(3);
      expect(t!.error).to.deep.equal(e3);

      await finishedTask(ctx.store(), 'ca-hist-ok', 'SUCCEEDED', T0);
      const ok = await ctx.store().getAttempts('ca-hist-ok');
      expect(ok).to.have.length(1);
      expect(ok[0].outcome).to.equal('SUCCEEDED');
      expect(ok[0].error).to.equal(null);
    });
  });
}
