import { expect } from 'chai';
import { CapReading, decideAdmission, lowWaterCount, OverflowSettings, planRelease } from '../../src/domain/overflow-policy';
import { SubmissionGuard } from '../../src/services/submission-guard';
import { OverloadedError } from '../../src/domain/errors';
import { loadConfig } from '../../src/config';
import path from 'node:path';
import { OverflowRelease } from '../../src/services/overflow-release';
import { ManualClock } from '../../src/domain/clock';
import type { Store } from '../../src/storage/store';
import type { SchedulerMetrics } from '../../src/observability/metrics';

const ON: OverflowSettings = { enabled: true, lowWaterMark: 0.5, maxTasks: 3 };
const OFF: OverflowSettings = { ...ON, enabled: false };
const global = (waiting: number, cap: number | null = 10): CapReading[] => [{ scope: 'global', waiting, cap }];

describe('overflow policy: admission', () => {
  it('under every threshold everything is admitted, with overflow on or off', () => {
    for (const p of ['low', 'medium', 'high'] as const) {
      expect(decideAdmission(p, global(7), 0, 0, ON)).to.deep.equal({ kind: 'admit' });
      expect(decideAdmission(p, global(7), 0, 0, OFF)).to.deep.equal({ kind: 'admit' });
    }
  });

  it('from 80 % low is held when overflow is on, refused when off; medium and high behave as without overflow', () => {
    expect(decideAdmission('low', global(8), 0, 0, ON)).to.deep.equal({ kind: 'overflow' });
    expect(decideAdmission('low', global(8), 0, 0, OFF)).to.deep.equal({ kind: 'refuse', scope: 'global', waiting: 8, cap: 10 });
    expect(decideAdmission('medium', global(8), 0, 0, ON)).to.deep.equal({ kind: 'admit' });
    expect(decideAdmission('medium', global(9), 0, 0, ON)).to.deep.equal({ kind: 'refuse', scope: 'global', waiting: 9, cap: 10 });
    expect(decideAdmission('high', global(9), 0, 0, ON)).to.deep.equal({ kind: 'admit' });
  });

  it('at the cap itself (the hard cap) every priority is refused, low included', () => {
    for (const p of ['low', 'medium', 'high'] as const) {
      expect(decideAdmission(p, global(10), 0, 0, ON)).to.deep.equal({ kind: 'refuse', scope: 'global', waiting: 10, cap: 10 });
    }
  });

  it('a full hold refuses with scope overflow', () => {
    expect(decideAdmission('low', global(8), 0, 3, ON)).to.deep.equal({ kind: 'refuse', scope: 'overflow', waiting: 3, cap: 3 });
  });

  it('a low task of a tenant with tasks held is held too (it does not overtake them), even under the threshold', () => {
    expect(decideAdmission('low', global(1), 1, 1, ON)).to.deep.equal({ kind: 'overflow' });
    expect(decideAdmission('medium', global(1), 1, 1, ON)).to.deep.equal({ kind: 'admit' });
    expect(decideAdmission('low', global(1), 1, 1, OFF)).to.deep.equal({ kind: 'admit' });
  });

  it('the tenant cap sheds on its own; no cap sets no limit', () => {
    const readings: CapReading[] = [
      { scope: 'tenant', waiting: 4, cap: 5 },
      { scope: 'global', waiting: 4, cap: null },
    ];
    expect(decideAdmission('low', readings, 0, 0, ON)).to.deep.equal({ kind: 'overflow' });
    expect(decideAdmission('low', [{ scope: 'tenant', waiting: 5, cap: 5 }], 0, 0, ON)).to.include({ kind: 'refuse', scope: 'tenant' });
    expect(decideAdmission('low', global(1_000_000, null), 0, 0, ON)).to.deep.equal({ kind: 'admit' });
  });
});

describe('overflow policy: release plan', () => {
  const held = [
    { id: 'a1', tenantId: 'a' },
    { id: 'b1', tenantId: 'b' },
    { id: 'a2', tenantId: 'a' },
    { id: 'b2', tenantId: 'b' },
  ];
  const noTenantCap = () => null;

  it('releases oldest first up to the low-water mark of the global cap', () => {
    expect(planRelease(held, { a: 2 }, { global: 10, tenant: noTenantCap }, 0.5, 100)).to.deep.equal(['a1', 'b1', 'a2']);
    expect(planRelease(held, { a: 5 }, { global: 10, tenant: noTenantCap }, 0.5, 100)).to.deep.equal([]);
    expect(planRelease(held, {}, { global: 10, tenant: noTenantCap }, 0.5, 2)).to.deep.equal(['a1', 'b1']);
  });

  it('a tenant at its own low-water mark is skipped and does not hold up the others', () => {
    const caps = { global: null, tenant: (t: string) => (t === 'a' ? 4 : null) };
    expect(planRelease(held, { a: 2 }, caps, 0.5, 100)).to.deep.equal(['b1', 'b2']);
    expect(planRelease(held, { a: 1 }, caps, 0.5, 100)).to.deep.equal(['a1', 'b1', 'b2']);
  });

  it('without caps everything held is released, a batch at a time', () => {
    expect(planRelease(held, { a: 100 }, { global: null, tenant: noTenantCap }, 0.5, 3)).to.deep.equal(['a1', 'b1', 'a2']);
  });

  it('the low-water count is at least 1, so a tiny cap still drains its hold', () => {
    expect(lowWaterCount(1, 0.5)).to.equal(1);
    expect(lowWaterCount(10, 0.5)).to.equal(5);
    expect(lowWaterCount(10, 0.35)).to.equal(3);
  });
});

describe('submission guard with overflow', () => {
  const config = (overflow: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { maxWaitingTasks: 10, overflow, ...extra },
    });

  it('marks the held items of a batch, counts them apart, and refuses the whole batch at the hard cap', () => {
    const guard = new SubmissionGuard(config({ enabled: true, maxTasks: 2 }));
    guard.refresh({ t: 7 }, {});
    const batch = [
      { tenantId: 't', priority: 'low' as const },
      { tenantId: 't', priority: 'low' as const },
      { tenantId: 't', priority: 'high' as const },
    ];
    const held = guard.admit(batch, 0);
    expect(held).to.deep.equal([false, true, false]);
    guard.stored([
      { tenantId: 't', state: 'PENDING' },
      { tenantId: 't', state: 'OVERFLOW' },
      { tenantId: 't', state: 'PENDING' },
    ]);
    guard.settle(batch, held);
    // 9 waiting, 1 held: low is held (the hold has room for one more), then the hold is full.
    expect(guard.admit([{ tenantId: 't', priority: 'low' }], 0)).to.deep.equal([true]);
    guard.stored([{ tenantId: 't', state: 'OVERFLOW' }]);
    guard.settle([{ tenantId: 't' }], [true]);
    expect(() => guard.admit([{ tenantId: 't', priority: 'low' }], 0))
      .to.throw(OverloadedError)
      .with.property('details')
      .that.includes({ scope: 'overflow', waiting: 2, cap: 2 });
    guard.stored([{ tenantId: 't', state: 'PENDING' }]);
    expect(() => guard.admit([{ tenantId: 't', priority: 'low' }], 0))
      .to.throw(OverloadedError)
      .with.property('details')
      .that.includes({ scope: 'global', waiting: 10 });
  });

  it('admitted tasks count until settled: admissions before any write ends see each other, a failed write gives its place back', () => {
    const guard = new SubmissionGuard(config({ enabled: false }));
    guard.refresh({ t: 7 }, {});
    const one = [{ tenantId: 't', priority: 'high' as const }];
    const first = guard.admit(one, 0);
    const second = guard.admit(one, 0);
    const third = guard.admit(one, 0);
    expect(() => guard.admit(one, 0))
      .to.throw(OverloadedError)
      .with.property('details')
      .that.includes({ scope: 'global', waiting: 10 });
    // The first is stored, the second and third fail: two places come back.
    guard.stored([{ tenantId: 't', state: 'PENDING' }]);
    guard.settle(one, first);
    guard.settle(one, second);
    guard.settle(one, third);
    guard.admit(one, 0);
    guard.admit(one, 0);
    expect(() => guard.admit(one, 0)).to.throw(OverloadedError);
  });

  it('a workflow is never held: its low tasks are refused as without overflow', () => {
    const guard = new SubmissionGuard(config({ enabled: true }));
    guard.refresh({ t: 8 }, {});
    expect(() => guard.admit([{ tenantId: 't', priority: 'low' }], 0, { overflow: false })).to.throw(OverloadedError);
    expect(guard.admit([{ tenantId: 't', priority: 'low' }], 0)).to.deep.equal([true]);
  });

  it('config: OVERFLOW_ENABLED turns it on; a low-water mark over 0.8 is refused naming the key', () => {
    const dir = path.resolve(__dirname, '..', '..', '..', 'config');
    expect(loadConfig({ configDir: dir, env: {} }).overflow.enabled).to.equal(false);
    expect(loadConfig({ configDir: dir, env: { OVERFLOW_ENABLED: 'true' } }).overflow).to.include({ enabled: true, lowWaterMark: 0.5 });
    expect(() => loadConfig({ configDir: dir, env: { OVERFLOW_ENABLED: 'maybe' } })).to.throw(/overflow\.enabled \(env OVERFLOW_ENABLED\)/);
    expect(() => loadConfig({ configDir: dir, env: {}, overrides: { overflow: { lowWaterMark: 0.9 } } })).to.throw(
      /overflow\.lowWaterMark/,
    );
  });
});

describe('overflow release pass', () => {
  const config = (enabled: boolean) =>
    loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { maxWaitingTasks: 10, overflow: { enabled } },
    });

  /** A release over a store that only counts held tasks (nothing held) and records its reads. */
  function releaseOver(enabled: boolean) {
    const reads = { count: 0 };
    const store = { countOverflowByTenant: async () => (reads.count++, {}) } as unknown as Store;
    const cfg = config(enabled);
    const release = new OverflowRelease({
      store,
      clock: new ManualClock(0),
      config: cfg,
      guard: new SubmissionGuard(cfg),
      metrics: {} as SchedulerMetrics,
      gateway: { tasksStored: () => undefined },
    });
    return { release, reads };
  }

  it('with overflow disabled, passes stop reading the store once one found nothing held', async () => {
    const { release, reads } = releaseOver(false);
    for (let i = 0; i < 5; i++) expect(await release.pass()).to.equal(0);
    expect(reads.count).to.equal(1);
  });

  it('with overflow enabled, every pass reads the held counts', async () => {
    const { release, reads } = releaseOver(true);
    for (let i = 0; i < 5; i++) await release.pass();
    expect(reads.count).to.equal(5);
  });
});
