import { expect } from 'chai';
import { loadConfig } from '../../src/config';
import { DispatchLimits, RateLimit } from '../../src/domain/dispatch-limits';
import { applyLimits, limitsInForce } from '../../src/services/limits-in-force';
import { TenantAdmin } from '../../src/services/tenant-admin';
import { ManualClock } from '../../src/domain/clock';
import type { Store } from '../../src/storage/store';
import { OPEN_CALLER } from '../../src/tenancy/caller';
import { insertedValues, TenantSettings, TenantSettingsChange } from '../../src/storage/tenant-store';
import path from 'node:path';

/** The three tables a node's limits come from, shared by the "members" of a test. */
function sharedSettings(control: { held?: Array<() => void> } = {}) {
  const tenants = new Map<string, TenantSettings>();
  const types = new Map<string, RateLimit>();
  const keys = new Map<string, number>();
  const store = {
    putTenantSettings: async (c: TenantSettingsChange) => {
      const had = tenants.get(c.tenantId);
      const fresh = insertedValues(c);
      const row: TenantSettings = {
        tenantId: c.tenantId,
        weight: c.weight !== undefined || !had ? fresh.weight : had.weight,
        rateLimit: c.rateLimit !== undefined || !had ? fresh.rateLimit : had.rateLimit,
        updatedAt: c.updatedAt,
      };
      tenants.set(c.tenantId, row);
      return row;
    },
    deleteTenantSettings: async (id: string) => tenants.delete(id),
    listTenantSettings: async () => {
      const read = [...tenants.values()];
      // A read held by the test (`hold`): it answers what it read, when the test says.
      return control.held ? new Promise<TenantSettings[]>((r) => control.held?.push(() => r(read))) : read;
    },
    putTaskTypeLimit: async (t: string, l: RateLimit | null) => void (l ? types.set(t, l) : types.delete(t)),
    listTaskTypeLimits: async () => [...types].map(([taskType, limit]) => ({ taskType, limit })),
    putConcurrencyLimit: async (k: string, n: number) => void keys.set(k, n),
    deleteConcurrencyLimit: async (k: string) => keys.delete(k),
    listConcurrencyLimits: async () => [...keys].map(([key, maxRunning]) => ({ key, maxRunning })),
  };
  return store as unknown as Store;
}

const configDir = path.resolve(__dirname, '..', '..', '..', 'config');
const admin = OPEN_CALLER;

describe('limits in force: the config with the stored settings over it, applied by difference', () => {
  it('limitsInForce: stored values replace the config file’s; a stored null weight keeps the config’s, a stored null tenant limit is none', () => {
    const config = {
      tenants: {
        acme: { weight: 2, rateLimit: { ratePerSecond: 5, burst: 1 } },
        beta: { weight: 3 },
        delta: { rateLimit: { ratePerSecond: 6, burst: 1 } },
      },
      rateLimits: { http: { ratePerSecond: 10, burst: 2 } },
    } as never;
    const wanted = limitsInForce(
      config,
      [
        { tenantId: 'acme', weight: null, rateLimit: { ratePerSecond: 1, burst: 1 }, updatedAt: 0 },
        { tenantId: 'gamma', weight: 7, rateLimit: null, updatedAt: 0 },
        { tenantId: 'delta', weight: null, rateLimit: null, updatedAt: 0 },
      ],
      [{ taskType: 'echo', limit: { ratePerSecond: 3, burst: 1 } }],
    );
    expect(Object.fromEntries(wanted.weights)).to.deep.equal({ acme: 2, beta: 3, gamma: 7 });
    expect(Object.fromEntries(wanted.tenants), 'delta: its stored null over the config’s 6/s').to.deep.equal({
      acme: { ratePerSecond: 1, burst: 1 },
    });
    expect(Object.fromEntries(wanted.taskTypes)).to.deep.equal({
      http: { ratePerSecond: 10, burst: 2 },
      echo: { ratePerSecond: 3, burst: 1 },
    });
  });

  it('applyLimits changes only what differs: an unchanged bucket is the same bucket (not refilled), a removed one is gone', () => {
    const limits = new DispatchLimits();
    limits.setTypeLimit('echo', { ratePerSecond: 1, burst: 1 }, 0);
    limits.setTypeLimit('constructor', { ratePerSecond: 1, burst: 1 }, 0);
    limits.setTenantLimit('old', { ratePerSecond: 1, burst: 1 }, 0);
    limits.setWeight('old', 4);
    const echo = limits.typeBucket('echo');
    const ctor = limits.typeBucket('constructor');
    const wanted = {
      weights: new Map([['acme', 2]]),
      tenants: new Map<string, RateLimit>(),
      taskTypes: new Map<string, RateLimit>([
        ['echo', { ratePerSecond: 1, burst: 1 }],
        ['constructor', { ratePerSecond: 1, burst: 1 }],
        ['http', { ratePerSecond: 9, burst: 1 }],
      ]),
    };
    expect(applyLimits(limits, wanted, 1000)).to.equal(4); // weight old removed, acme set; tenant old removed; http set
    expect(limits.typeBucket('echo'), 'unchanged: the same bucket').to.equal(echo);
    expect(limits.typeBucket('constructor'), 'a type named like an Object property is compared as its own').to.equal(ctor);
    expect(limits.snapshot()).to.deep.equal({
      weights: { acme: 2 },
      taskTypes: {
        echo: { ratePerSecond: 1, burst: 1 },
        constructor: { ratePerSecond: 1, burst: 1 },
        http: { ratePerSecond: 9, burst: 1 },
      },
      tenants: {},
    });
    expect(applyLimits(limits, wanted, 2000), 'nothing left to change').to.equal(0);
  });

  it('a tenant limit removed with PUT rate_limit: null over the config’s stays removed after a restart; DELETE gives the config’s back', async () => {
    const store = sharedSettings();
    const clock = new ManualClock(0);
    const config = loadConfig({
      configDir,
      env: {},
      overrides: { tenants: { acme: { weight: 2, rateLimit: { ratePerSecond: 5 } } } },
    });
    const start = async () => {
      const limits = new DispatchLimits();
      limits.setWeight('acme', 2); // as dispatchLimitsFromConfig made them
      limits.setTenantLimit('acme', { ratePerSecond: 5, burst: 1 }, 0);
      const node = new TenantAdmin({ store, clock, config, limits });
      await node.loadStored();
      return { node, limits };
    };
    const first = await start();
    expect(await first.node.putTenant('acme', { rate_limit: null }, admin)).to.deep.include({ weight: 2, rate_limit: null });
    expect(first.limits.tenantBucket('acme')).to.equal(null);
    await first.node.putTenant('acme', { weight: 4 }, admin);
    expect(first.limits.tenantBucket('acme'), 'a PUT leaving rate_limit out keeps none').to.equal(null);

    const restarted = await start();
    expect(restarted.limits.tenantBucket('acme'), 'the stored null, not the config’s 5/s').to.equal(null);
    expect(restarted.limits.weightOf('acme')).to.equal(4);
    expect((await restarted.node.listTenants(admin)).tenants).to.deep.equal([{ tenant_id: 'acme', weight: 4, rate_limit: null }]);

    await restarted.node.deleteTenant('acme', admin);
    const again = await start();
    expect(again.limits.snapshot().tenants.acme).to.deep.equal({ ratePerSecond: 5, burst: 1 });
    expect(again.limits.weightOf('acme')).to.equal(2);
  });

  it('a reload that read the store before a change here, answering after it, does not leave the change undone (reloads run one at a time)', async () => {
    const control: { held?: Array<() => void> } = {};
    const store = sharedSettings(control);
    const config = loadConfig({ configDir, env: {}, overrides: {} });
    const limits = new DispatchLimits();
    const node = new TenantAdmin({ store, clock: new ManualClock(0), config, limits });
    control.held = [];
    const tick = () => new Promise((r) => setImmediate(r));
    // A member's announcement: its reload reads the store (no settings yet) and answers late.
    const announced = node.loadStored();
    await tick();
    let done = false;
    const put = node.putTenant('acme', { weight: 4 }, admin).finally(() => (done = true));
    // Held reads answer last first: a read made after the change answers before the stale one.
    while (!done || control.held.length > 0) {
      await tick();
      control.held.pop()?.();
    }
    await announced;
    expect(await put).to.deep.include({ weight: 4 });
    expect(limits.weightOf('acme'), 'the change is in force').to.equal(4);
  });

  it('two PUTs of different fields at once: both hold, in the store and in force', async () => {
    const store = sharedSettings();
    const config = loadConfig({ configDir, env: {}, overrides: {} });
    const limits = new DispatchLimits();
    const node = new TenantAdmin({ store, clock: new ManualClock(0), config, limits });
    await Promise.all([
      node.putTenant('acme', { weight: 4 }, admin),
      node.putTenant('acme', { rate_limit: { rate_per_second: 7 } }, admin),
    ]);
    expect(await store.listTenantSettings()).to.deep.equal([
      { tenantId: 'acme', weight: 4, rateLimit: { ratePerSecond: 7, burst: 1 }, updatedAt: 0 },
    ]);
    expect(limits.weightOf('acme')).to.equal(4);
    expect(limits.snapshot().tenants.acme).to.deep.equal({ ratePerSecond: 7, burst: 1 });
  });

  it('DELETE of a task type’s stored limit puts the config file’s back at once, as a restart does, and answers it', async () => {
    const store = sharedSettings();
    const clock = new ManualClock(0);
    const config = loadConfig({ configDir, env: {}, overrides: { rateLimits: { http: { ratePerSecond: 2 } } } });
    const start = async () => {
      const limits = new DispatchLimits();
      limits.setTypeLimit('http', { ratePerSecond: 2, burst: 1 }, 0); // as dispatchLimitsFromConfig made it
      const node = new TenantAdmin({ store, clock, config, limits });
      await node.loadStored();
      return { node, limits };
    };
    const first = await start();
    await first.node.putRateLimit('http', { rate_per_second: 50, burst: 5 }, admin);
    expect(await first.node.deleteRateLimit('http', admin)).to.deep.equal({
      task_type: 'http',
      deleted: true,
      rate_limit: { rate_per_second: 2, burst: 1 },
    });
    expect(first.limits.snapshot().taskTypes.http).to.deep.equal({ ratePerSecond: 2, burst: 1 });
    expect((await first.node.listRateLimits(admin)).rate_limits).to.deep.equal([{ task_type: 'http', rate_per_second: 2, burst: 1 }]);
    const restarted = await start();
    expect(restarted.limits.snapshot().taskTypes.http, 'the same limit after a restart').to.deep.equal({ ratePerSecond: 2, burst: 1 });
    expect(await restarted.node.deleteRateLimit('echo', admin)).to.deep.equal({ task_type: 'echo', deleted: true, rate_limit: null });
  });

  it('tenant ids named like Object.prototype members (toString, constructor, valueOf) are tenants like any other', async () => {
    const store = sharedSettings();
    const clock = new ManualClock(0);
    const config = loadConfig({ configDir, env: {}, overrides: { tenants: { toString: { rateLimit: { ratePerSecond: 3 } } } } });
    const limits = new DispatchLimits();
    limits.setTenantLimit('toString', { ratePerSecond: 3, burst: 1 }, 0);
    const node = new TenantAdmin({ store, clock, config, limits });
    await node.loadStored();
    expect((await node.listTenants(admin)).tenants).to.deep.equal([
      { tenant_id: 'toString', weight: 1, rate_limit: { rate_per_second: 3, burst: 1 } },
    ]);
    for (const id of ['toString', 'constructor', 'valueOf', 'hasOwnProperty']) {
      const configured = id === 'toString' ? { rate_per_second: 3, burst: 1 } : null;
      expect(await node.putTenant(id, { weight: 2 }, admin), id).to.deep.equal({ tenant_id: id, weight: 2, rate_limit: configured });
      expect(await node.putTenant(id, { rate_limit: null }, admin), id).to.deep.equal({ tenant_id: id, weight: 2, rate_limit: null });
    }
    expect(await node.deleteTenant('toString', admin)).to.deep.equal({
      tenant_id: 'toString',
      deleted: true,
      weight: 1,
      rate_limit: { rate_per_second: 3, burst: 1 },
    });
    expect(await node.deleteTenant('constructor', admin)).to.deep.equal({
      tenant_id: 'constructor',
      deleted: true,
      weight: 1,
      rate_limit: null,
    });
  });

  it('two members on one store: a change made through one is in force on the other after its next read, deletes too', async () => {
    const store = sharedSettings();
    const clock = new ManualClock(0);
    const config = loadConfig({ configDir, env: {}, overrides: { rateLimits: { http: { ratePerSecond: 10 } } } });
    const a = new TenantAdmin({ store, clock, config, limits: new DispatchLimits() });
    const bLimits = new DispatchLimits();
    bLimits.setTypeLimit('http', { ratePerSecond: 10, burst: 1 }, 0); // as dispatchLimitsFromConfig made it
    const b = new TenantAdmin({ store, clock, config, limits: bLimits });
    await b.loadStored();
    const httpBucket = bLimits.typeBucket('http');

    await a.putRateLimit('echo', { rate_per_second: 2 }, admin);
    await a.putTenant('acme', { weight: 3, rate_limit: { rate_per_second: 4, burst: 2 } }, admin);
    await a.concurrency.put('stripe', { max_running: 2 }, admin);
    expect(bLimits.typeBucket('echo'), 'not before its read').to.equal(null);
    await b.loadStored();
    expect(bLimits.snapshot().taskTypes.echo).to.deep.equal({ ratePerSecond: 2, burst: 1 });
    expect(bLimits.snapshot().tenants.acme).to.deep.equal({ ratePerSecond: 4, burst: 2 });
    expect(bLimits.weightOf('acme')).to.equal(3);
    expect(bLimits.concurrency.maxRunningOf('stripe')).to.equal(2);
    expect(bLimits.typeBucket('http'), 'the untouched config limit keeps its bucket').to.equal(httpBucket);

    await a.deleteRateLimit('echo', admin);
    await a.deleteTenant('acme', admin);
    await a.concurrency.delete('stripe', admin);
    await b.loadStored();
    expect(bLimits.typeBucket('echo')).to.equal(null);
    expect(bLimits.tenantBucket('acme')).to.equal(null);
    expect(bLimits.weightOf('acme')).to.equal(1);
    expect(bLimits.concurrency.maxRunningOf('stripe')).to.equal(null);
    expect(bLimits.typeBucket('http')).to.equal(httpBucket);
  });
});
