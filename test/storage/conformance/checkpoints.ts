/** Store conformance, checkpoints and progress of long tasks (see ./index.ts). */
import { expect } from 'chai';
import { MAX_CHECKPOINT_BYTES } from '../../../src/domain/checkpoint';
import { CheckpointTooLargeError, ValidationError } from '../../../src/domain/errors';
import { completion, newTask, rejectionOf, startTask, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';

export function describeCheckpoints(ctx: ConformanceContext): void {
  describe('saveCheckpoint, reportProgress', () => {
    /** Ends attempt `attempt` of `id` as a retry due at once, and claims the next attempt. */
    async function retry(
      id: string,
      attempt: number,
      now: number,
    ): Promise<{ attempt: number; lastCheckpoint?: unknown; hasCheckpoint: boolean }> {
      const [r] = await ctx
        .store()
        .completeAttempts(
          [completion(id, attempt, 'RETRYING', { retryAt: now, error: taskError('worker process was lost', 'worker_lost') })],
          now,
        );
      expect(r.applied).to.equal(true);
      const claimed = await ctx.store().claimTasks([id], 'worker-2', now + 1, 60_000);
      expect(claimed).to.have.lengthOf(1);
      return { attempt: claimed[0].attempt, lastCheckpoint: claimed[0].lastCheckpoint, hasCheckpoint: 'lastCheckpoint' in claimed[0] };
    }

    it('the next attempt reads the last checkpoint; the task shows it', async () => {
      await ctx.store().insertTasks([newTask('cp-a')]);
      const first = await startTask(ctx.store(), 'cp-a', T0);
      expect(await ctx.store().saveCheckpoint('cp-a', first, { next: 500 }, T0 + 1)).to.deep.equal({
        kind: 'saved',
        savedAt: T0 + 1,
        bytes: 12,
      });
      expect(await ctx.store().saveCheckpoint('cp-a', first, { next: 1000 }, T0 + 2)).to.include({ kind: 'saved' });
      const task = await ctx.store().getTask('cp-a');
      expect(task?.checkpoint).to.deep.equal({ value: { next: 1000 }, attempt: first, savedAt: T0 + 2, bytes: 13 });
      const next = await retry('cp-a', first, T0 + 10);
      expect(next).to.deep.equal({ attempt: first + 1, lastCheckpoint: { next: 1000 }, hasCheckpoint: true });
    });

    it('a task that never saved one claims without lastCheckpoint and shows none', async () => {
      await ctx.store().insertTasks([newTask('cp-none')]);
      await ctx.store().markPending(['cp-none'], T0);
      const [claimed] = await ctx.store().claimTasks(['cp-none'], 'w', T0, 60_000);
      expect(claimed).to.not.have.property('lastCheckpoint');
      const task = await ctx.store().getTask('cp-none');
      expect(task).to.not.have.property('checkpoint');
      expect(task).to.not.have.property('progress');
    });

    it("a stale attempt's checkpoint is refused and the newer one stays", async () => {
      await ctx.store().insertTasks([newTask('cp-stale')]);
      const first = await startTask(ctx.store(), 'cp-stale', T0);
      await ctx.store().saveCheckpoint('cp-stale', first, { next: 500 }, T0 + 1);
      const second = await retry('cp-stale', first, T0 + 10);
      expect(await ctx.store().saveCheckpoint('cp-stale', second.attempt, { next: 700 }, T0 + 20)).to.include({ kind: 'saved' });
      // the lost first attempt is still running somewhere and tries to save
      expect(await ctx.store().saveCheckpoint('cp-stale', first, { next: 9000 }, T0 + 30)).to.deep.equal({
        kind: 'conflict',
        state: 'RUNNING',
        attempt: second.attempt,
      });
      expect((await ctx.store().getTask('cp-stale'))?.checkpoint)
        .to.include({ attempt: second.attempt })
        .and.deep.include({ value: { next: 700 } });
    });

    it('a finished, waiting or unknown task takes no checkpoint', async () => {
      await ctx.store().insertTasks([newTask('cp-done'), newTask('cp-wait')]);
      const attempt = await startTask(ctx.store(), 'cp-done', T0);
      await ctx.store().completeAttempts([completion('cp-done', attempt, 'SUCCEEDED')], T0 + 5);
      expect(await ctx.store().saveCheckpoint('cp-done', attempt, { n: 1 }, T0 + 6)).to.deep.equal({
        kind: 'conflict',
        state: 'SUCCEEDED',
        attempt,
      });
      expect(await ctx.store().saveCheckpoint('cp-wait', 0, { n: 1 }, T0 + 6)).to.deep.equal({
        kind: 'conflict',
        state: 'PENDING',
        attempt: 0,
      });
      expect(await ctx.store().saveCheckpoint('cp-missing', 1, { n: 1 }, T0 + 6)).to.deep.equal({ kind: 'not_found' });
      expect(await ctx.store().getTask('cp-done')).to.not.have.property('checkpoint');
    });

    it('refuses a checkpoint over the cap with CheckpointTooLargeError and keeps the previous one', async () => {
      await ctx.store().insertTasks([newTask('cp-big')]);
      const attempt = await startTask(ctx.store(), 'cp-big', T0);
      await ctx.store().saveCheckpoint('cp-big', attempt, { next: 1 }, T0 + 1);
      const atCap = 'x'.repeat(MAX_CHECKPOINT_BYTES - 2); // a JSON string: two quotes more
      expect(await ctx.store().saveCheckpoint('cp-big', attempt, atCap, T0 + 2)).to.include({ kind: 'saved', bytes: MAX_CHECKPOINT_BYTES });
      const err = await rejectionOf(() => ctx.store().saveCheckpoint('cp-big', attempt, `${atCap}y`, T0 + 3));
      expect(err).to.be.instanceOf(CheckpointTooLargeError);
      expect((err as CheckpointTooLargeError).details).to.include({
        field: 'checkpoint',
        limit_bytes: MAX_CHECKPOINT_BYTES,
        actual_bytes: MAX_CHECKPOINT_BYTES + 1,
      });
      expect((await ctx.store().getTask('cp-big'))?.checkpoint).to.include({ value: atCap, savedAt: T0 + 2 });
      expect(await rejectionOf(() => ctx.store().saveCheckpoint('cp-big', attempt, undefined, T0 + 4))).to.be.instanceOf(ValidationError);
    });

    it('null clears the checkpoint: the next attempt starts from the beginning', async () => {
      await ctx.store().insertTasks([newTask('cp-clear')]);
      const first = await startTask(ctx.store(), 'cp-clear', T0);
      await ctx.store().saveCheckpoint('cp-clear', first, { next: 5 }, T0 + 1);
      expect(await ctx.store().saveCheckpoint('cp-clear', first, null, T0 + 2)).to.deep.equal({ kind: 'saved', savedAt: T0 + 2, bytes: 0 });
      expect((await retry('cp-clear', first, T0 + 10)).hasCheckpoint).to.equal(false);
    });

    it('progress of the running attempt is written (the last report wins); a stale one is not', async () => {
      await ctx.store().insertTasks([newTask('pg-a')]);
      const first = await startTask(ctx.store(), 'pg-a', T0);
      const written = await ctx.store().reportProgress(
        [
          { taskId: 'pg-a', attempt: first, value: 0.25 },
          { taskId: 'pg-a', attempt: first, value: { done: 600, total: 1000, message: 'copying' } },
          { taskId: 'pg-a', attempt: first + 1, value: 0.9 },
          { taskId: 'pg-missing', attempt: 1, value: 0.9 },
        ],
        T0 + 5,
      );
      expect(written).to.equal(2);
      expect((await ctx.store().getTask('pg-a'))?.progress).to.deep.equal({
        value: { done: 600, total: 1000, message: 'copying' },
        attempt: first,
        reportedAt: T0 + 5,
      });
      await ctx.store().completeAttempts([completion('pg-a', first, 'SUCCEEDED')], T0 + 6);
      expect(await ctx.store().reportProgress([{ taskId: 'pg-a', attempt: first, value: 1 }], T0 + 7)).to.equal(0);
      expect((await ctx.store().getTask('pg-a'))?.progress).to.include({ reportedAt: T0 + 5 });
    });

    it('a report issued before its attempt ends (neither awaited) is written: the ended task shows it', async () => {
      // The worker sends its last progress and then its result: the store takes them in that
      // order, as one writer does. (PostgreSQL and MongoDB queued progress with the other writes,
      // behind a batch of submissions here, and the completion in the lane that goes first: the
      // last report found the task SUCCEEDED and was dropped.)
      await ctx.store().insertTasks([newTask('pg-last')]);
      const attempt = await startTask(ctx.store(), 'pg-last', T0);
      const busy = ctx.store().insertTasks(Array.from({ length: 2000 }, (_, i) => newTask(`pg-busy-${i}`)));
      const reported = ctx.store().reportProgress([{ taskId: 'pg-last', attempt, value: { done: 10, total: 10 } }], T0 + 5);
      const completed = ctx.store().completeAttempts([completion('pg-last', attempt, 'SUCCEEDED')], T0 + 6);
      expect(await reported).to.equal(1);
      expect((await completed)[0].applied).to.equal(true);
      await busy;
      expect(await ctx.store().getTask('pg-last')).to.deep.include({
        state: 'SUCCEEDED',
        progress: { value: { done: 10, total: 10 }, attempt, reportedAt: T0 + 5 },
      });
    });

    it('refuses a value that is not progress, writing nothing of the batch', async () => {
      await ctx.store().insertTasks([newTask('pg-bad')]);
      const attempt = await startTask(ctx.store(), 'pg-bad', T0);
      for (const value of [1.5, -0.1, { done: 5, total: 2 }, { pct: 3 }, 'half', {}]) {
        const err = await rejectionOf(() =>
          ctx.store().reportProgress(
            [
              { taskId: 'pg-bad', attempt, value: 0.5 },
              { taskId: 'pg-bad', attempt, value: value as never },
            ],
            T0 + 1,
          ),
        );
        expect(err, JSON.stringify(value)).to.be.instanceOf(ValidationError);
        expect((err as ValidationError).details.field).to.equal('progress');
      }
      expect(await ctx.store().getTask('pg-bad')).to.not.have.property('progress');
    });
  });
}
