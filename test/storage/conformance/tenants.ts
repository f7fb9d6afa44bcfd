/** Store conformance, tenant settings and waiting counts (see ./index.ts). */
import { expect } from 'chai';
import { completion, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

export function describeTenants(ctx: ConformanceContext): void {
  describe('tenant settings', () => {
    it('stores, replaces and lists tenant settings by tenant id', async () => {
      const s = ctx.store();
      await s.putTenantSettings({ tenantId: 'b', weight: 2, rateLimit: null, updatedAt: T0 });
      await s.putTenantSettings({ tenantId: 'a', weight: null, rateLimit: { ratePerSecond: 5, burst: 1 }, updatedAt: T0 });
      await s.putTenantSettings({ tenantId: 'b', weight: 3, rateLimit: { ratePerSecond: 1, burst: 2 }, updatedAt: T0 + 1 });
      expect(await s.listTenantSettings()).to.deep.equal([
        { tenantId: 'a', weight: null, rateLimit: { ratePerSecond: 5, burst: 1 }, updatedAt: T0 },
        { tenantId: 'b', weight: 3, rateLimit: { ratePerSecond: 1, burst: 2 }, updatedAt: T0 + 1 },
      ]);
    });

    it('a change keeps the fields it does not give (the store merges them), a new row takes the fallback; each answers the row', async () => {
      const s = ctx.store();
      const fallback = { weight: 1, rateLimit: null };
      const limit = { ratePerSecond: 7, burst: 2 };
      expect(await s.putTenantSettings({ tenantId: 'm', weight: 4, fallback, updatedAt: T0 })).to.deep.equal({
        tenantId: 'm',
        weight: 4,
        rateLimit: null,
        updatedAt: T0,
      });
      // Two changes of different fields (as two PUTs at once): neither undoes the other.
      await Promise.all([
        s.putTenantSettings({ tenantId: 'm', rateLimit: limit, fallback, updatedAt: T0 + 1 }),
        s.putTenantSettings({ tenantId: 'n', rateLimit: limit, fallback: { weight: 9, rateLimit: null }, updatedAt: T0 + 1 }),
      ]);
      expect(await s.putTenantSettings({ tenantId: 'm', weight: 5, fallback, updatedAt: T0 + 2 })).to.deep.equal({
        tenantId: 'm',
        weight: 5,
        rateLimit: limit,
        updatedAt: T0 + 2,
      });
      expect(await s.putTenantSettings({ tenantId: 'm', rateLimit: null, fallback, updatedAt: T0 + 3 })).to.deep.include({
        weight: 5,
        rateLimit: null,
      });
      expect(await s.listTenantSettings()).to.deep.equal([
        { tenantId: 'm', weight: 5, rateLimit: null, updatedAt: T0 + 3 },
        { tenantId: 'n', weight: 9, rateLimit: limit, updatedAt: T0 + 1 },
      ]);
    });

    it("deletes one tenant's settings, leaves the others and the tenant's tasks, and says whether there were any", async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('t-a', { tenantId: 'a' })]);
      await s.putTenantSettings({ tenantId: 'a', weight: 2, rateLimit: { ratePerSecond: 5, burst: 1 }, updatedAt: T0 });
      await s.putTenantSettings({ tenantId: 'b', weight: 3, rateLimit: null, updatedAt: T0 });
      expect(await s.deleteTenantSettings('a')).to.equal(true);
      expect(await s.listTenantSettings()).to.deep.equal([{ tenantId: 'b', weight: 3, rateLimit: null, updatedAt: T0 }]);
      expect(await s.deleteTenantSettings('a')).to.equal(false);
      expect(await s.deleteTenantSettings('never-set')).to.equal(false);
      expect((await s.getTask('t-a'))?.tenantId).to.equal('a');
      expect(await s.countWaitingByTenant()).to.deep.equal({ a: 1 });
      await s.putTenantSettings({ tenantId: 'a', weight: 4, rateLimit: null, updatedAt: T0 + 1 });
      expect((await s.listTenantSettings()).map((t) => [t.tenantId, t.weight])).to.deep.equal([
        ['a', 4],
        ['b', 3],
      ]);
    });

    it('sets, replaces and removes task-type limits', async () => {
      const s = ctx.store();
      await s.putTaskTypeLimit('send_email', { ratePerSecond: 100, burst: 10 }, T0);
      await s.putTaskTypeLimit('send_sms', { ratePerSecond: 10, burst: 1 }, T0);
      await s.putTaskTypeLimit('send_email', { ratePerSecond: 50, burst: 5 }, T0 + 1);
      expect(await s.listTaskTypeLimits()).to.deep.equal([
        { taskType: 'send_email', limit: { ratePerSecond: 50, burst: 5 } },
        { taskType: 'send_sms', limit: { ratePerSecond: 10, burst: 1 } },
      ]);
      await s.putTaskTypeLimit('send_sms', null, T0 + 2);
      await s.putTaskTypeLimit('never-set', null, T0 + 2);
      expect((await s.listTaskTypeLimits()).map((l) => l.taskType)).to.deep.equal(['send_email']);
    });

    it('counts waiting tasks per tenant (not running, not finished)', async () => {
      const s = ctx.store();
      await s.insertTasks([
        newTask('w1', { tenantId: 'a' }),
        newTask('w2', { tenantId: 'a', scheduledAt: T0 + 60_000 }),
        newTask('w3', { tenantId: 'b' }),
        newTask('run', { tenantId: 'b' }),
        newTask('done', { tenantId: 'c' }),
      ]);
      await startTask(s, 'run', T0);
      const attempt = await startTask(s, 'done', T0);
      await s.completeAttempts([completion('done', attempt, 'SUCCEEDED')], T0 + 1);
      expect(await s.countWaitingByTenant()).to.deep.equal({ a: 2, b: 1 });
    });
  });
}
