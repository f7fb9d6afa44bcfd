/** Store conformance, open / close (see ./index.ts). */
import { expect } from 'chai';
import { StoreConfigError } from '../../../src/storage/store';
import { completion, newTask, PARTITIONS, rejectionOf, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';
import { freshRecord, withoutSeq } from './records';

export function describeOpenClose(ctx: ConformanceContext): void {
  describe('open / close', () => {
    it('answers ping while open', async () => {
      expect(await ctx.store().ping()).to.equal(true);
    });

    it('reports its health: no fault while the store takes writes, and changes are heard by subscribers', async () => {
      const store = ctx.store();
      expect(store.health.fault).to.equal(null);
      const heard: unknown[] = [];
      const unsubscribe = store.health.onChange((fault) => heard.push(fault));
      await store.insertTasks([newTask('health-1')]);
      expect(store.health.fault).to.equal(null);
      expect(heard).to.deep.equal([]);
      unsubscribe();
    });

    it('close is idempotent', async () => {
      await ctx.store().close();
      await ctx.store().close();
    });

    it('close flushes writes issued before it: their callers are answered and the data survives', async () => {
      const insert = ctx.store().insertTasks([newTask('fl-1'), newTask('fl-2')]);
      const cancel = ctx.store().cancelTask('fl-1', T0 + 1);
      await ctx.store().close();
      await insert;
      expect((await cancel).kind).to.equal('cancelled');
      await ctx.store().open(PARTITIONS);
      expect(await ctx.stateOf('fl-1')).to.equal('CANCELLED');
      expect(await ctx.stateOf('fl-2')).to.equal('PENDING');
    });

    it('returns a promise from every method after close, never throwing synchronously', async () => {
      await ctx.store().close();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['insertTasks', () => ctx.store().insertTasks([newTask('late')])],
        ['markPending', () => ctx.store().markPending(['late'], T0)],
        ['claimTasks', () => ctx.store().claimTasks(['late'], 'w', T0, 1000)],
        ['completeAttempts', () => ctx.store().completeAttempts([completion('late', 1, 'SUCCEEDED')], T0)],
        ['cancelTask', () => ctx.store().cancelTask('late', T0)],
        ['getTask', () => ctx.store().getTask('late')],
        ['getAttempts', () => ctx.store().getAttempts('late')],
        ['listTasks', () => ctx.store().listTasks({ limit: 10 })],
        ['loadDue', () => ctx.store().loadDue(0, T0, 10)],
        ['findOrphanedAttempts', () => ctx.store().findOrphanedAttempts(10)],
        ['countByState', () => ctx.store().countByState()],
      ];
      for (const [method, call] of calls) {
        let result: unknown;
        expect(() => {
          result = call();
        }, method).to.not.throw();
        expect(result, method).to.be.instanceOf(Promise);
        await (result as Promise<unknown>).catch(() => undefined);
      }
    });

    it('refuses to reopen with another partition count (StoreConfigError)', async () => {
      await ctx.store().insertTasks([newTask('pc-1')]);
      await ctx.store().close();
      const err = await rejectionOf(() => ctx.store().open(PARTITIONS * 2));
      expect(err).to.be.instanceOf(StoreConfigError);
      expect((err as Error).name).to.equal('StoreConfigError');
      expect((err as Error).message).to.match(/partition/i);
      // The refused open changed nothing: the original count still opens, with the data.
      await ctx.store().open(PARTITIONS);
      expect((await ctx.store().getTask('pc-1'))?.state).to.equal('PENDING');
    });

    it('keeps every committed write across close and reopen with the same partition count', async () => {
      const full = newTask('du-full', {
        payload: { keep: ['me', 1, { ü: null }] },
        metadata: { tenant_id: 'tenant-a' },
        scheduledAt: T0 + 5000,
        priority: 'high',
      });
      await ctx.store().insertTasks([full, newTask('du-run'), newTask('du-done'), newTask('du-cancel')]);
      await startTask(ctx.store(), 'du-run', T0, 'w-d');
      await startTask(ctx.store(), 'du-done', T0, 'w-d');
      await ctx.store().completeAttempts([completion('du-done', 1, 'SUCCEEDED', { result: { r: 'ok' }, durationMs: 9 })], T0 + 9);
      await ctx.store().cancelTask('du-cancel', T0);
      const before = {
        tasks: (await ctx.store().listTasks({ limit: 100 })).tasks,
        attempts: await ctx.store().getAttempts('du-done'),
        counts: await ctx.store().countByState(),
      };

      await ctx.store().close();
      await ctx.store().open(PARTITIONS);

      expect((await ctx.store().listTasks({ limit: 100 })).tasks).to.deep.equal(before.tasks);
      expect(await ctx.store().getAttempts('du-done')).to.deep.equal(before.attempts);
      expect(await ctx.store().countByState()).to.deep.equal(before.counts);
      expect(withoutSeq(await ctx.store().getTask('du-full'))).to.deep.equal(freshRecord(full));
      expect(await ctx.store().findOrphanedAttempts(10)).to.deep.equal([
        { taskId: 'du-run', attempt: 1, workerId: 'w-d', retry: newTask('x').retry },
      ]);
      // `external: false` leaves out external consumers' attempts (their lease goes on across a restart).
      await ctx.store().insertTasks([newTask('du-pull'), newTask('du-stream')]);
      await startTask(ctx.store(), 'du-pull', T0, 'http:consumer-1');
      await startTask(ctx.store(), 'du-stream', T0, 'external:orders');
      const all = (await ctx.store().findOrphanedAttempts(10)).map((o) => o.taskId);
      expect(all).to.have.members(['du-run', 'du-pull', 'du-stream']);
      expect(await ctx.store().findOrphanedAttempts(10, { external: false })).to.deep.equal([
        { taskId: 'du-run', attempt: 1, workerId: 'w-d', retry: newTask('x').retry },
      ]);
      // Still writable after the reopen.
      await ctx.store().insertTasks([newTask('du-after')]);
      expect((await ctx.store().getTask('du-after'))?.state).to.equal('PENDING');
    });
  });
}
