import { expect } from 'chai';
import { SchedulerMetrics } from '../../src/observability/metrics';
import { OTHER_TENANTS, TenantLabels } from '../../src/observability/tenant-labels';

describe('per-tenant metrics with bounded labels', () => {
  it('the first N tenants keep their own label, later ones share "_other"', () => {
    const l = new TenantLabels(2);
    expect([l.of('a'), l.of('b'), l.of('c'), l.of('a'), l.of('d')]).to.deep.equal(['a', 'b', OTHER_TENANTS, 'a', OTHER_TENANTS]);
  });

  it('ready depth per tenant is read at scrape time and summed into "_other" past the bound', async () => {
    const m = new SchedulerMetrics(async () => ({}) as never, 1);
    m.setReadySource(() => [
      ['acme', 3],
      ['globex', 4],
      ['initech', 5],
    ]);
    m.tenantDispatched.inc({ tenant: m.tenantLabels.of('acme') });
    const text = await m.registry.getSingleMetricAsString('scheduler_tenant_ready_tasks');
    expect(text).to.contain('scheduler_tenant_ready_tasks{tenant="acme"} 3');
    expect(text).to.contain('scheduler_tenant_ready_tasks{tenant="_other"} 9');
    expect(await m.registry.getSingleMetricAsString('scheduler_tenant_dispatched_total')).to.contain('{tenant="acme"} 1');
  });
});
