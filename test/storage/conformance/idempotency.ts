/** Store conformance, idempotency keys in insertTasks (see ./index.ts). */
import { expect } from 'chai';
import { IDEMPOTENCY_CONFLICT } from '../../../src/storage/store';
import { IdempotencyKeyConflict } from '../../../src/storage/idempotency-conflict';
import { acks, completion, newTask, rejectionOf, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

const keyed = (id: string, key: string, hash: string, over: Record<string, unknown> = {}) =>
  newTask(id, { idempotencyKey: key, idempotency: { requestHash: hash, expiresAt: T0 + 1000 }, ...over });

export function describeIdempotency(ctx: ConformanceContext): void {
  describe('insertTasks with idempotency keys', () => {
    it('a held key with the same hash answers with the first task and stores nothing', async () => {
      expect(acks(await ctx.store().insertTasks([keyed('ik-1', 'k', 'h1')]))).to.deep.equal([{ taskId: 'ik-1', replayed: false }]);
      expect(await ctx.store().insertTasks([keyed('ik-2', 'k', 'h1')])).to.deep.equal([{ taskId: 'ik-1', replayed: true, seq: 0 }]);
      expect(await ctx.store().getTask('ik-2')).to.equal(null);
    });

    it('a held key with another hash rejects the whole list with IdempotencyConflict', async () => {
      await ctx.store().insertTasks([keyed('ik-a', 'k', 'h1')]);
      const err = (await rejectionOf(() =>
        ctx.store().insertTasks([newTask('ik-free'), keyed('ik-b', 'k', 'h2')]),
      )) as IdempotencyKeyConflict;
      expect(err.name).to.equal(IDEMPOTENCY_CONFLICT);
      // The typed error on both adapters, the SQLite writer thread's hop included.
      expect(err).to.be.instanceOf(IdempotencyKeyConflict);
      expect(err.details).to.deep.equal({ taskId: 'ik-a', tenantId: 'tenant-a', key: 'k' });
      expect(await ctx.store().getTask('ik-free')).to.equal(null);
    });

    it('a held key whose task was deleted (dead-letter delete) rejects the same request with taskDeleted: no replay of a missing task, no second run', async () => {
      await ctx.store().insertTasks([keyed('ik-dead', 'kd', 'h1')]);
      const attempt = await startTask(ctx.store(), 'ik-dead', T0 + 1);
      await ctx.store().completeAttempts([completion('ik-dead', attempt, 'DEAD')], T0 + 2);
      expect(await ctx.store().deleteDead('ik-dead')).to.equal(true);
      const err = (await rejectionOf(() =>
        ctx.store().insertTasks([newTask('ik-dfree'), keyed('ik-dead2', 'kd', 'h1', { createdAt: T0 + 3 })]),
      )) as IdempotencyKeyConflict;
      expect(err.name).to.equal(IDEMPOTENCY_CONFLICT);
      expect(err).to.be.instanceOf(IdempotencyKeyConflict);
      expect(err.details).to.deep.include({ taskId: 'ik-dead', key: 'kd', taskDeleted: true });
      expect(await ctx.store().getTask('ik-dfree')).to.equal(null);
      expect(await ctx.store().getTask('ik-dead2')).to.equal(null);
      // Once the key's window is over, the same request is a new task.
      const later = keyed('ik-dead3', 'kd', 'h1', { createdAt: T0 + 1000, idempotency: { requestHash: 'h1', expiresAt: T0 + 5000 } });
      expect(acks(await ctx.store().insertTasks([later]))).to.deep.equal([{ taskId: 'ik-dead3', replayed: false }]);
    });

    it('keys are per tenant, and released at their expiry', async () => {
      await ctx.store().insertTasks([keyed('ik-t1', 'k', 'h1', { tenantId: 't1' })]);
      expect((await ctx.store().insertTasks([keyed('ik-t2', 'k', 'h9', { tenantId: 't2' })]))[0].replayed).to.equal(false);
      const later = keyed('ik-late', 'k', 'h9', {
        tenantId: 't1',
        createdAt: T0 + 1000,
        idempotency: { requestHash: 'h9', expiresAt: T0 + 5000 },
      });
      expect(acks(await ctx.store().insertTasks([later]))).to.deep.equal([{ taskId: 'ik-late', replayed: false }]);
      expect((await ctx.store().insertTasks([keyed('ik-late2', 'k', 'h9', { tenantId: 't1', createdAt: T0 + 1001 })]))[0]).to.deep.equal({
        taskId: 'ik-late',
        replayed: true,
        seq: 0,
      });
    });

    it('getIdempotencyKeys answers per key, in order, the held task and hash; null when absent, of another tenant or released', async () => {
      await ctx.store().insertTasks([keyed('gk-1', 'k1', 'h1'), keyed('gk-2', 'k2', 'h2', { tenantId: 't2' })]);
      const pairs = [
        { tenantId: 't2', key: 'k2' },
        { tenantId: 'tenant-a', key: 'k1' },
        { tenantId: 'tenant-a', key: 'k2' },
        { tenantId: 'tenant-a', key: 'nope' },
        { tenantId: 'tenant-a', key: 'k1' },
      ];
      expect(await ctx.store().getIdempotencyKeys(pairs, T0 + 1)).to.deep.equal([
        { taskId: 'gk-2', requestHash: 'h2' },
        { taskId: 'gk-1', requestHash: 'h1' },
        null,
        null,
        { taskId: 'gk-1', requestHash: 'h1' },
      ]);
      // Released at its expiry (T0 + 1000), as insertTasks releases it.
      expect(await ctx.store().getIdempotencyKeys([{ tenantId: 'tenant-a', key: 'k1' }], T0 + 999)).to.deep.equal([
        { taskId: 'gk-1', requestHash: 'h1' },
      ]);
      expect(await ctx.store().getIdempotencyKeys([{ tenantId: 'tenant-a', key: 'k1' }], T0 + 1000)).to.deep.equal([null]);
      expect(await ctx.store().getIdempotencyKeys([], T0)).to.deep.equal([]);
    });
  });
}
