import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { requestAs, TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/** `DELETE /api/v1/tenants/{id}`: the stored settings go, the config's come back, the tasks stay. */
describe('REST: deleting a tenant', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ apiKeys, tenants: { globex: { weight: 5, rateLimit: { ratePerSecond: 2, burst: 1 } } } });
  });
  afterEach(async () => f.close());
  const as = requestAs(() => f);

  it('removes the stored weight and limit; the tenant competes with the defaults; its tasks are untouched', async () => {
    const task = (await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z' })).json()
      .task_id as string;
    await as(KEYS.admin, 'PUT', '/api/v1/tenants/acme', { weight: 3, rate_limit: { rate_per_second: 50 } });
    const del = await as(KEYS.admin, 'DELETE', '/api/v1/tenants/acme');
    expect(del.statusCode).to.equal(200);
    expect(del.json()).to.deep.equal({ tenant_id: 'acme', deleted: true, weight: 1, rate_limit: null });
    expect(f.limits.weightOf('acme')).to.equal(1);
    expect(f.limits.tenantBucket('acme')).to.equal(null);
    expect(await f.store.listTenantSettings()).to.deep.equal([]);
    expect((await as(KEYS.admin, 'GET', '/api/v1/tenants')).json().tenants.map((t: { tenant_id: string }) => t.tenant_id)).to.deep.equal([
      'globex',
    ]);
    // Idempotent: nothing stored any more.
    expect((await as(KEYS.admin, 'DELETE', '/api/v1/tenants/acme')).json()).to.deep.equal({
      tenant_id: 'acme',
      deleted: false,
      weight: 1,
      rate_limit: null,
    });
    // The task and the tenant's key still work; a new task for the tenant is accepted.
    const got = await as(KEYS.acme, 'GET', `/api/v1/tasks/${task}`);
    expect(got.statusCode).to.equal(200);
    expect(got.json().status).to.equal('SCHEDULED');
    expect((await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop' })).statusCode).to.equal(202);
    expect(await f.store.countWaitingByTenant()).to.deep.equal({ acme: 2 });
  });

  it("a tenant set in the config file goes back to the config's settings", async () => {
    await as(KEYS.admin, 'PUT', '/api/v1/tenants/globex', { weight: 9, rate_limit: null });
    expect(f.limits.weightOf('globex')).to.equal(9);
    expect(f.limits.tenantBucket('globex')).to.equal(null);
    const del = await as(KEYS.admin, 'DELETE', '/api/v1/tenants/globex');
    expect(del.json()).to.deep.equal({ tenant_id: 'globex', deleted: true, weight: 5, rate_limit: { rate_per_second: 2, burst: 1 } });
    expect(f.limits.weightOf('globex')).to.equal(5);
    expect(f.limits.tenantBucket('globex')?.ratePerSecond).to.equal(2);
  });

  it("a tenant's key gets 403; a body is refused", async () => {
    await as(KEYS.admin, 'PUT', '/api/v1/tenants/acme', { weight: 3 });
    const res = await as(KEYS.acme, 'DELETE', '/api/v1/tenants/acme');
    expect(res.statusCode).to.equal(403);
    expect(res.json().error.code).to.equal('FORBIDDEN');
    const body = await as(KEYS.admin, 'DELETE', '/api/v1/tenants/acme', { force: true });
    expect(body.statusCode).to.equal(400);
    expect(body.json().error.details.field).to.equal('force');
    expect((await f.store.listTenantSettings()).map((s) => s.tenantId)).to.deep.equal(['acme']);
  });
});
