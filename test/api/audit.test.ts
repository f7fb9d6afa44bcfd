import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** GET /api/v1/audit: overdue waiting tasks (re-offered) and expired leases, with a gauge. */
describe('REST: audit reconciler', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ auditOverdueMs: 60_000 });
  });
  afterEach(async () => f.close());

  it('reports a task well past due and offers it to its owner again; reports an expired lease', async () => {
    const late = (await f.service.submit({ task_type: 'noop', scheduled_at: new Date(f.clock.now() + 1000).toISOString() })).task_id;
    const running = (await f.service.submit({ task_type: 'noop' })).task_id;
    await f.store.claimTasks([running], 'worker-9', f.clock.now(), 5_000);
    let report = (await f.app.inject({ method: 'GET', url: '/api/v1/audit' })).json();
    expect(report.overdue).to.include({ count: 0 });
    expect(report.expired_leases).to.include({ count: 0 });
    f.clock.advance(62_000);
    f.stored.length = 0;
    report = (await f.app.inject({ method: 'GET', url: '/api/v1/audit' })).json();
    expect(report.overdue.count).to.equal(1);
    expect(report.overdue.task_ids).to.deep.equal([late]);
    expect(f.stored.map((e) => e.id)).to.deep.equal([late]);
    expect(report.expired_leases.count).to.equal(1);
    expect(report.expired_leases.attempts[0]).to.include({ task_id: running, attempt: 1, worker_id: 'worker-9' });
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).to.contain('scheduler_audit_findings{kind="overdue"} 1');
    expect(metrics).to.contain('scheduler_audit_findings{kind="expired_lease"} 1');
  });
});
