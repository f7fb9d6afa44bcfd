/** Store conformance, claimTasks (see ./index.ts). */
import { expect } from 'chai';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeClaim(ctx: ConformanceContext): void {
  describe('claimTasks', () => {
    it('moves PENDING to RUNNING, starts attempt 1 and records worker and start time', async () => {
      await ctx.store().insertTasks([newTask('cl-1')]);
      const claimed = await ctx.store().claimTasks(['cl-1'], 'worker-7', T0 + 20, 30_000);
      expect(claimed).to.have.length(1);
      expect(claimed[0].attempt).to.equal(1);
      const t = await ctx.store().getTask('cl-1');
      expect(t!.state).to.equal('RUNNING');
      expect(t!.attempts).to.equal(1);
      expect(t!.workerId).to.equal('worker-7');
      expect(t!.startedAt).to.equal(T0 + 20);
      expect(t!.updatedAt).to.equal(T0 + 20);
      expect(t!.cancelRequested).to.equal(false);
    });

    it('keeps the traceparent of a submission and hands it to the claim (issue 9)', async () => {
      const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      await ctx.store().insertTasks([newTask('cl-trace', { traceparent: tp }), newTask('cl-untraced')]);
      expect((await ctx.store().getTask('cl-trace'))!.traceparent).to.equal(tp);
      expect((await ctx.store().getTask('cl-untraced'))!.traceparent ?? null).to.equal(null);
      const claimed = await ctx.store().claimTasks(['cl-trace', 'cl-untraced'], 'w', T0 + 1, 10_000);
      expect(claimed.find((c) => c.id === 'cl-trace')!.traceparent).to.equal(tp);
      expect(claimed.find((c) => c.id === 'cl-untraced')!.traceparent ?? null).to.equal(null);
    });

    it('returns every field a worker needs', async () => {
      const t = newTask('cl-fields', {
        taskType: 'http',
        payload: { url: 'https://example.com/hook', body: { ä: ['ß', 1] } },
        idempotencyKey: 'idem-cl',
        tenantId: 'tenant-q',
        timeoutSeconds: 45,
        retry: { maxRetries: 5, backoff: 'fixed', delaySeconds: 3 },
        createdAt: T0,
        dueAt: T0 + 7,
      });
      const [ack] = await ctx.store().insertTasks([t]);
      const [{ seq, workflowId, ...c }] = await ctx.store().claimTasks(['cl-fields'], 'w', T0 + 9, 10_000);
      // Where the store gives the claim a seq (a hint for its completion), it is the task's own.
      if (seq !== undefined) expect(seq).to.equal(ack.seq);
      // Where it gives the task's workflow (PostgreSQL), a plain task is in none.
      if (workflowId !== undefined) expect(workflowId).to.equal(null);
      expect(c).to.deep.equal({
        id: 'cl-fields',
        attempt: 1,
        taskType: 'http',
        payload: { url: 'https://example.com/hook', body: { ä: ['ß', 1] } },
        timeoutSeconds: 45,
        idempotencyKey: 'idem-cl',
        dueAt: T0 + 7,
        retry: { maxRetries: 5, backoff: 'fixed', delaySeconds: 3 },
        partition: t.partition,
        tenantId: 'tenant-q',
        startedAt: T0 + 9,
      });
    });

    it('lets only the first of two claims of the same id win (compare-and-set)', async () => {
      await ctx.store().insertTasks([newTask('cl-cas')]);
      expect(await ctx.store().claimTasks(['cl-cas'], 'w1', T0 + 1, 1000)).to.have.length(1);
      expect(await ctx.store().claimTasks(['cl-cas'], 'w2', T0 + 2, 1000)).to.deep.equal([]);
      const t = await ctx.store().getTask('cl-cas');
      expect(t!.attempts).to.equal(1);
      expect(t!.workerId).to.equal('w1');
      expect(t!.startedAt).to.equal(T0 + 1);
    });

    it('hands an attempt out once when two claims race', async () => {
      await ctx.store().insertTasks([newTask('cl-race')]);
      const [r1, r2] = await Promise.all([
        ctx.store().claimTasks(['cl-race'], 'w1', T0 + 1, 1000),
        ctx.store().claimTasks(['cl-race'], 'w2', T0 + 1, 1000),
      ]);
      expect(r1.length + r2.length).to.equal(1);
      expect((await ctx.store().getTask('cl-race'))!.attempts).to.equal(1);
    });

    it('claims a repeated id in one call once', async () => {
      await ctx.store().insertTasks([newTask('cl-twice')]);
      const claimed = await ctx.store().claimTasks(['cl-twice', 'cl-twice'], 'w', T0, 1000);
      expect(claimed.map((c) => c.id)).to.deep.equal(['cl-twice']);
    });

    it('does not claim SCHEDULED or RETRYING tasks before they are due, nor CANCELLED, terminal or unknown ones', async () => {
      await ctx
        .store()
        .insertTasks([newTask('cl-sched', { scheduledAt: T0 + 10_000 }), newTask('cl-cancel'), newTask('cl-retry'), newTask('cl-ok')]);
      await ctx.store().cancelTask('cl-cancel', T0);
      const attempt = await startTask(ctx.store(), 'cl-retry', T0);
      await ctx.store().completeAttempts([completion('cl-retry', attempt, 'RETRYING', { retryAt: T0 + 5 })], T0 + 1);
      await finishedTask(ctx.store(), 'cl-done', 'SUCCEEDED', T0);

      const claimed = await ctx
        .store()
        .claimTasks(['cl-sched', 'cl-cancel', 'cl-retry', 'cl-done', 'cl-unknown', 'cl-ok'], 'w', T0 + 4, 1000);
      expect(claimed.map((c) => c.id)).to.deep.equal(['cl-ok']);
      expect(await ctx.stateOf('cl-sched')).to.equal('SCHEDULED');
      expect(await ctx.stateOf('cl-cancel')).to.equal('CANCELLED');
      expect(await ctx.stateOf('cl-retry')).to.equal('RETRYING');
      expect(await ctx.stateOf('cl-done')).to.equal('SUCCEEDED');
      expect((await ctx.store().getTask('cl-retry'))!.attempts).to.equal(1);
    });

    it('claims a due SCHEDULED or RETRYING task directly (its due mark may come after the claim)', async () => {
      await ctx.store().insertTasks([newTask('cl-due', { scheduledAt: T0 + 100 }), newTask('cl-rdue')]);
      const first = await startTask(ctx.store(), 'cl-rdue', T0);
      await ctx.store().completeAttempts([completion('cl-rdue', first, 'RETRYING', { retryAt: T0 + 50 })], T0 + 1);
      expect(await ctx.store().claimTasks(['cl-due', 'cl-rdue'], 'w', T0 + 49, 1000)).to.deep.equal([]);

      const claimed = await ctx.store().claimTasks(['cl-due', 'cl-rdue'], 'w', T0 + 100, 1000);
      expect(claimed.map((c) => [c.id, c.attempt, c.startedAt])).to.deep.equal([
        ['cl-due', 1, T0 + 100],
        ['cl-rdue', 2, T0 + 100],
      ]);
      expect(await ctx.stateOf('cl-due')).to.equal('RUNNING');
      expect(await ctx.stateOf('cl-rdue')).to.equal('RUNNING');
      // The mark that comes late leaves a claimed task alone.
      expect(await ctx.store().markPending(['cl-due', 'cl-rdue'], T0 + 101)).to.deep.equal([]);
      expect(await ctx.stateOf('cl-due')).to.equal('RUNNING');
    });

    it('finds rows by their seq hints; a hint to another row or to none changes nothing (claims and completions)', async () => {
      const s = ctx.store();
      const [a, b, c] = await s.insertTasks([newTask('cl-hint-a'), newTask('cl-hint-b'), newTask('cl-hint-c')]);
      const missing = Math.max(a.seq, b.seq, c.seq) + 1_000_000;
      // a's hint names b's row (the id must still match, so b is not claimed as a), b's no row, c's its own.
      const claimed = await s.claimTasks(['cl-hint-a', 'cl-hint-b', 'cl-hint-c'], 'w', T0 + 1, 1000, undefined, [b.seq, missing, c.seq]);
      expect(claimed.map((t) => [t.id, t.attempt])).to.deep.equal([
        ['cl-hint-a', 1],
        ['cl-hint-b', 1],
        ['cl-hint-c', 1],
      ]);
      // A right hint to a row already claimed claims nothing (compare-and-set).
      expect(await s.claimTasks(['cl-hint-c'], 'w2', T0 + 2, 1000, undefined, [c.seq])).to.deep.equal([]);
      const results = await s.completeAttempts(
        [
          completion('cl-hint-a', 1, 'SUCCEEDED', { seq: b.seq }),
          completion('cl-hint-b', 1, 'SUCCEEDED', { seq: missing }),
          completion('cl-hint-c', 2, 'SUCCEEDED', { seq: c.seq }),
        ],
        T0 + 3,
      );
      expect(results.map((r) => [r.taskId, r.applied])).to.deep.equal([
        ['cl-hint-a', true],
        ['cl-hint-b', true],
        ['cl-hint-c', false],
      ]);
      expect(await ctx.stateOf('cl-hint-a')).to.equal('SUCCEEDED');
      expect(await ctx.stateOf('cl-hint-b')).to.equal('SUCCEEDED');
      expect(await ctx.stateOf('cl-hint-c')).to.equal('RUNNING');
      expect((await s.getTask('cl-hint-c'))!.workerId).to.equal('w');
    });

    it('numbers attempts across retries', async () => {
      await ctx.store().insertTasks([newTask('cl-n')]);
      expect(await startTask(ctx.store(), 'cl-n', T0)).to.equal(1);
      await ctx.store().completeAttempts([completion('cl-n', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);
      expect(await startTask(ctx.store(), 'cl-n', T0 + 10, 'worker-2')).to.equal(2);
      const t = await ctx.store().getTask('cl-n');
      expect(t!.attempts).to.equal(2);
      expect(t!.workerId).to.equal('worker-2');
      expect(t!.startedAt).to.equal(T0 + 10);
    });
  });
}
