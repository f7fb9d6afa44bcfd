/** Store conformance, the overflow hold: held tasks, their release, cancel and PATCH (see ./index.ts). */
import { expect } from 'chai';
import { newTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

const held = (id: string, overrides: Parameters<typeof newTask>[1] = {}) =>
  newTask(id, { priority: 'low', state: 'OVERFLOW', ...overrides });

export function describeOverflow(ctx: ConformanceContext): void {
  describe('overflow hold', () => {
    it('a held task is stored OVERFLOW, read back as such, and is in no partition window nor waiting count', async () => {
      const s = ctx.store();
      await s.insertTasks([held('h1'), newTask('w1')]);
      expect(await ctx.stateOf('h1')).to.equal('OVERFLOW');
      const partition = (await s.getTask('h1'))!.partition;
      expect((await s.loadDue(partition, T0 + 3_600_000, 100)).map((e) => e.id)).to.not.include('h1');
      expect(await s.countWaitingByTenant()).to.deep.equal({ 'tenant-a': 1 });
      expect((await s.countByState()).OVERFLOW).to.equal(1);
      expect((await s.listTasks({ status: 'OVERFLOW', limit: 10 })).tasks.map((t) => t.id)).to.deep.equal(['h1']);
    });

    it('lists held tasks oldest first, bounded, leaving out the tenants asked; counts them per tenant', async () => {
      const s = ctx.store();
      await s.insertTasks([held('h1', { tenantId: 'a' }), held('h2', { tenantId: 'b' })]);
      await s.insertTasks([held('h3', { tenantId: 'a' }), newTask('w1', { tenantId: 'a' })]);
      await s.insertTasks([held('h4', { tenantId: 'c' })]);
      expect((await s.listOverflow(10)).map((t) => t.id)).to.deep.equal(['h1', 'h2', 'h3', 'h4']);
      expect(await s.listOverflow(2)).to.deep.equal([
        { id: 'h1', tenantId: 'a' },
        { id: 'h2', tenantId: 'b' },
      ]);
      expect((await s.listOverflow(10, ['a', 'c'])).map((t) => t.id)).to.deep.equal(['h2']);
      expect(await s.countOverflowByTenant()).to.deep.equal({ a: 2, b: 1, c: 1 });
    });

    it('releases to PENDING due now, or to SCHEDULED at its own later scheduled_at; each once', async () => {
      const s = ctx.store();
      const now = T0 + 10_000;
      await s.insertTasks([held('past', { scheduledAt: T0 - 5_000 }), held('none'), held('later', { scheduledAt: T0 + 60_000 })]);
      const entries = await s.releaseOverflow(['past', 'later', 'none'], now);
      expect(entries.map((e) => [e.id, e.state, e.dueAt])).to.deep.equal([
        ['past', 'PENDING', now],
        ['later', 'SCHEDULED', T0 + 60_000],
        ['none', 'PENDING', now],
      ]);
      expect(entries.every((e) => e.priority === 'low' && e.tenantId === 'tenant-a')).to.equal(true);
      const later = await s.getTask('later');
      expect(later).to.include({ state: 'SCHEDULED', dueAt: T0 + 60_000, scheduledAt: T0 + 60_000 });
      expect(await s.getTask('none')).to.include({ state: 'PENDING', dueAt: now, updatedAt: now });
      expect(await s.releaseOverflow(['past', 'later', 'none'], now + 1)).to.deep.equal([]);
      const partition = (await s.getTask('none'))!.partition;
      expect((await s.loadDue(partition, now, 100)).map((e) => e.id)).to.include('none');
      expect(await s.countOverflowByTenant()).to.deep.equal({});
    });

    it('a held task can be cancelled (then never released) and changed by PATCH while it stays held', async () => {
      const s = ctx.store();
      await s.insertTasks([held('c1'), held('p1')]);
      expect((await s.cancelTask('c1', T0 + 1)).kind).to.equal('cancelled');
      expect(await ctx.stateOf('c1')).to.equal('CANCELLED');
      expect(await s.releaseOverflow(['c1'], T0 + 2)).to.deep.equal([]);
      const patched = await s.updateWaitingTask('p1', { scheduledAt: T0 + 90_000, priority: 'medium', payload: { n: 2 } }, T0 + 3);
      expect(patched.kind).to.equal('updated');
      if (patched.kind !== 'updated') return;
      expect(patched.entry).to.equal(null);
      expect(patched.task).to.include({ state: 'OVERFLOW', scheduledAt: T0 + 90_000, priority: 'medium' });
      const [entry] = await s.releaseOverflow(['p1'], T0 + 4);
      expect(entry).to.include({ id: 'p1', state: 'SCHEDULED', dueAt: T0 + 90_000, priority: 'medium' });
    });
  });
}
