import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** Cron routes through app.inject, on a real SQLite store with a manual clock (2026-06-01T12:00Z). */
describe('REST: cron tasks', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const post = (url: string, payload: unknown) => f.app.inject({ method: 'POST', url, payload: payload as object });
  const create = (body: Record<string, unknown>) =>
    post('/api/v1/cron-tasks', { name: 'report', cron_expression: '0 9 * * 1-5', task_type: 'echo', ...body });

  it('creates a definition (201) with defaults, next_fire_time and a preview on request', async () => {
    const res = await post('/api/v1/cron-tasks?preview=3', {
      name: 'daily report',
      cron_expression: '30 2 * * *',
      timezone: 'America/New_York',
      task_type: 'echo',
      payload: { report: 'daily' },
      priority: 'high',
      metadata: { tenant_id: 'acme' },
    });
    expect(res.statusCode).to.equal(201);
    const body = res.json();
    expect(body).to.include({
      name: 'daily report',
      timezone: 'America/New_York',
      task_type: 'echo',
      priority: 'high',
      overlap_policy: 'skip',
      catch_up: 'latest',
      max_catch_up: 100,
      enabled: true,
      next_fire_time: '2026-06-02T06:30:00.000Z',
      last_fire_time: null,
    });
    expect(body.metadata).to.deep.equal({ tenant_id: 'acme' });
    expect(body.next_fire_times).to.deep.equal(['2026-06-02T06:30:00.000Z', '2026-06-03T06:30:00.000Z', '2026-06-04T06:30:00.000Z']);
    expect(f.cronsChanged).to.deep.equal([body.cron_id]);
    const got = (await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${body.cron_id}?preview=2` })).json();
    expect(got.next_fire_times).to.deep.equal(body.next_fire_times.slice(0, 2));
  });

  it('a definition created paused has no next fire times: its create and its GET say the same', async () => {
    const res = await post('/api/v1/cron-tasks?preview=3', {
      name: 'paused',
      cron_expression: '@hourly',
      task_type: 'echo',
      enabled: false,
    });
    expect(res.statusCode, res.body).to.equal(201);
    expect(res.json()).to.deep.include({ status: 'PAUSED', next_fire_time: null, next_fire_times: [] });
    const got = (await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${res.json().cron_id}?preview=3` })).json();
    expect(got.next_fire_times).to.deep.equal([]);
  });

  it('preview: the next instants in UTC from a given time, pinned across the New York spring-forward gap', async () => {
    const res = await post('/api/v1/cron-tasks/preview', {
      cron_expression: '30 2 * * *',
      timezone: 'America/New_York',
      from: '2026-03-07T00:00:00Z',
      count: 3,
    });
    expect(res.statusCode).to.equal(200);
    // 8 March 2026 has no 02:30 in New York: it fires at 03:30 EDT (07:30Z), shifted by the gap.
    expect(res.json().fire_times).to.deep.equal(['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
    expect(res.json().rules).to.be.an('array').with.length.above(0);
    const fromNow = (await post('/api/v1/cron-tasks/preview', { cron_expression: '@hourly' })).json();
    expect(fromNow).to.include({ timezone: 'UTC', from: '2026-06-01T12:00:00.000Z' });
    expect(fromNow.fire_times).to.have.length(5);
    expect(fromNow.fire_times[0]).to.equal('2026-06-01T13:00:00.000Z');
  });

  it('preview near the end of year 9999: only instants RFC 3339 can write (no "+010000-…")', async () => {
    const res = await post('/api/v1/cron-tasks/preview', { cron_expression: '0 0 * * *', from: '9999-12-29T12:00:00Z', count: 5 });
    expect(res.statusCode).to.equal(200);
    expect(res.json().fire_times).to.deep.equal(['9999-12-30T00:00:00.000Z', '9999-12-31T00:00:00.000Z']);
  });

  describe('bad input → 400 naming the field; nothing stored', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['an expression with a value out of range', { cron_expression: '61 * * * *' }, 'cron_expression'],
      ['an expression with four fields', { cron_expression: '* * * *' }, 'cron_expression'],
      ['an unknown alias', { cron_expression: '@fortnightly' }, 'cron_expression'],
      ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      ['a missing name', { name: undefined }, 'name'],
      ['an unknown overlap policy', { overlap_policy: 'parallel' }, 'overlap_policy'],
      ['an unknown catch-up mode', { catch_up: 'some' }, 'catch_up'],
      ['max_catch_up 0', { max_catch_up: 0 }, 'max_catch_up'],
      ['a scheduled_at (the schedule decides)', { scheduled_at: '2026-06-01T12:00:00Z' }, 'scheduled_at'],
      ['an expression that is not a string', { cron_expression: 5 }, 'cron_expression'],
    ];
    for (const [what, body, field] of cases) {
      it(what, async () => {
        const res = await create(body);
        expect(res.statusCode, res.body).to.equal(400);
        expect(res.json().error.code).to.equal('VALIDATION_FAILED');
        expect(res.json().error.details.field).to.equal(field);
        expect((await f.app.inject({ method: 'GET', url: '/api/v1/cron-tasks' })).json().cron_tasks).to.deep.equal([]);
      });
    }

    it('an unregistered task type → 400 UNKNOWN_TASK_TYPE', async () => {
      const res = await create({ task_type: 'nope' });
      expect(res.statusCode).to.equal(400);
      expect(res.json().error).to.include({ code: 'UNKNOWN_TASK_TYPE' });
    });

    it('preview: count over 100, a date that does not exist, a bad zone', async () => {
      const bad = async (body: Record<string, unknown>, field: string) => {
        const res = await post('/api/v1/cron-tasks/preview', { cron_expression: '* * * * *', ...body });
        expect(res.statusCode, res.body).to.equal(400);
        expect(res.json().error.details.field).to.equal(field);
      };
      await bad({ count: 101 }, 'count');
      await bad({ from: '2026-02-30T00:00:00Z' }, 'from');
      await bad({ timezone: 'Nowhere' }, 'timezone');
      await bad({ from: 'yesterday' }, 'from');
    });

    it('?preview out of 1..100 → 400', async () => {
      const res = await f.app.inject({
        method: 'POST',
        url: '/api/v1/cron-tasks?preview=500',
        payload: { name: 'x', cron_expression: '* * * * *', task_type: 'noop' },
      });
      expect(res.statusCode).to.equal(400);
      expect(res.json().error.details).to.include({ field: 'preview', reason: 'must be a whole number from 1 to 100' });
      const limit = await f.app.inject({ method: 'GET', url: '/api/v1/cron-tasks?limit=abc' });
      expect(limit.json().error.details).to.include({ field: 'limit', reason: 'must be a whole number from 1 to 1000' });
    });
  });

  it("a step beyond its field's span is refused when saved; a definition stored before that check still reads, edits and fires", async () => {
    const refused = await create({ cron_expression: '0 */30 * * *' });
    expect(refused.statusCode).to.equal(400);
    expect(refused.json().error.details).to.include({ field: 'cron_expression' });
    const id = (await create({ cron_expression: '0 0 * * *' })).json().cron_id;
    await f.store.updateCron(id, { cronExpression: '0 */30 * * *' }, f.clock.now()); // as saved by an earlier version
    const got = await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${id}?preview=2` });
    expect(got.statusCode).to.equal(200);
    expect(got.json().next_fire_times).to.deep.equal(['2026-06-02T00:00:00.000Z', '2026-06-03T00:00:00.000Z']);
    const renamed = await f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: { name: 'kept', enabled: false } });
    expect(renamed.statusCode).to.equal(200);
    expect(renamed.json()).to.include({ name: 'kept', cron_expression: '0 */30 * * *' });
    const rewritten = await f.app.inject({
      method: 'PATCH',
      url: `/api/v1/cron-tasks/${id}`,
      payload: { cron_expression: '0 */31 * * *' },
    });
    expect(rewritten.statusCode).to.equal(400);
  });

  it('a template saved with metadata over maxMetadataBytes (before the cap) can still be edited; new metadata is held to the cap', async () => {
    const id = (await create({})).json().cron_id;
    const stored = (await f.store.getCron(id))!;
    const big = { tenant_id: stored.tenantId, note: 'm'.repeat(20_000) };
    await f.store.updateCron(id, { template: { ...stored.template, metadata: big } }, f.clock.now()); // as saved by an earlier version
    const patch = (body: Record<string, unknown>) => f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: body });
    const kept = await patch({ priority: 'high' });
    expect(kept.statusCode, kept.body).to.equal(200);
    expect(kept.json()).to.include({ priority: 'high' });
    const grown = await patch({ metadata: { tenant_id: stored.tenantId, note: 'n'.repeat(20_000) } });
    expect(grown.statusCode).to.equal(413);
    expect(grown.json().error.details.field).to.equal('metadata');
  });

  it('PATCHes of different fields at once all hold, and a new expression and time zone at once give the next fire time of both', async () => {
    for (let round = 0; round < 5; round++) {
      const id = (await create({ cron_expression: '0 0 1 1 *' })).json().cron_id;
      const patch = (body: Record<string, unknown>) => f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: body });
      const answers = await Promise.all([
        patch({ payload: { v: round } }),
        patch({ priority: 'high' }),
        patch({ name: `renamed-${round}` }),
        patch({ cron_expression: '0 12 * * *' }),
        patch({ timezone: 'Asia/Tokyo' }),
      ]);
      for (const a of answers) expect(a.statusCode, a.body).to.equal(200);
      const stored = (await f.store.getCron(id))!;
      expect(stored.template).to.deep.include({ payload: { v: round }, priority: 'high' });
      expect(stored).to.include({ name: `renamed-${round}`, cronExpression: '0 12 * * *', timezone: 'Asia/Tokyo' });
      // 12:00 in Tokyo is 03:00 UTC: the next one after now, whatever the day.
      expect(new Date(stored.nextFireTime as number).getUTCHours()).to.equal(3);
    }
  });

  it('a PATCH merged into a definition that another node edited meanwhile merges again: neither edit is undone', async () => {
    const id = (await create({ payload: { v: 0 } })).json().cron_id;
    const store = f.store;
    const real = store.updateCron.bind(store);
    let otherNodes = 2; // two edits land between this node's read and its write, one per try
    store.updateCron = async (cronId, changes, now) => {
      if (otherNodes > 0) {
        const seen = (await store.getCron(cronId))!;
        await real(cronId, { template: { ...seen.template, payload: { v: 3 - otherNodes } } }, now);
        otherNodes--;
      }
      return real(cronId, changes, now);
    };
    try {
      const a = await f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: { priority: 'high' } });
      expect(a.statusCode, a.body).to.equal(200);
      expect(a.json()).to.deep.include({ priority: 'high', payload: { v: 2 } });
      expect((await store.getCron(id))!.template).to.deep.include({ payload: { v: 2 }, priority: 'high' });
    } finally {
      store.updateCron = real;
    }
  });

  it('a PATCH whose definition keeps changing under it answers 503 STORE_CONTENDED and writes nothing of it', async () => {
    const id = (await create({ payload: { v: 0 } })).json().cron_id;
    const store = f.store;
    const real = store.updateCron.bind(store);
    store.updateCron = async (cronId, changes, now) => {
      await real(cronId, { name: `moved-${now}` }, now);
      return real(cronId, changes, now);
    };
    try {
      const a = await f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: { priority: 'high' } });
      expect(a.statusCode, a.body).to.equal(503);
      expect(a.json().error.code).to.equal('STORE_CONTENDED');
      expect(a.headers['retry-after']).to.equal('1');
      expect((await store.getCron(id))!.template.priority).to.not.equal('high');
    } finally {
      store.updateCron = real;
    }
  });

  it("PATCH of the metadata keeps the definition's tenant in it, as at creation, and the cap counts it", async () => {
    const id = (await create({ metadata: { tenant_id: 'acme' } })).json().cron_id;
    const patch = (metadata: Record<string, unknown>) =>
      f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: { metadata } });
    const ok = await patch({ team: 'ops' });
    expect(ok.statusCode, ok.body).to.equal(200);
    expect((await f.store.getCron(id))!.template.metadata).to.deep.equal({ team: 'ops', tenant_id: 'acme' });
    // Fits as sent, not as its tasks store it: with the tenant (`,"tenant_id":"acme"` is 19 bytes)
    // and their null correlation id (`,"correlation_id":null` is 22).
    const pad = 'x'.repeat(16_384 - '{"pad":""}'.length - 5);
    const over = await patch({ pad });
    expect(over.statusCode).to.equal(413);
    expect(over.json().error.details).to.include({ field: 'metadata', actual_bytes: 16_379 + 19 + 22 });
  });

  it("a zone name is stored in the tz database's letter case; a link keeps its own name", async () => {
    expect((await create({ timezone: 'america/new_york' })).json().timezone).to.equal('America/New_York');
    expect((await create({ timezone: 'utc' })).json().timezone).to.equal('UTC');
    expect((await create({ timezone: 'US/Eastern' })).json().timezone).to.equal('US/Eastern');
    const preview = await post('/api/v1/cron-tasks/preview', { cron_expression: '0 9 * * *', timezone: 'europe/berlin', count: 1 });
    expect(preview.json().timezone).to.equal('Europe/Berlin');
    const id = (await create({})).json().cron_id;
    const patched = await f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: { timezone: 'asia/tokyo' } });
    expect(patched.json().timezone).to.equal('Asia/Tokyo');
  });

  it('PATCH pauses and resumes (next_fire_time from now), changes the expression; cannot move tenants', async () => {
    const id = (await create({})).json().cron_id;
    const patch = (body: unknown) => f.app.inject({ method: 'PATCH', url: `/api/v1/cron-tasks/${id}`, payload: body as object });
    const paused = await patch({ enabled: false });
    expect(paused.statusCode).to.equal(200);
    expect(paused.json()).to.include({ enabled: false, next_fire_time: null });
    f.clock.advance(3 * 24 * 3600 * 1000); // to Thursday 2026-06-04T12:00Z
    const resumed = (await patch({ enabled: true })).json();
    expect(resumed).to.include({ enabled: true, next_fire_time: '2026-06-05T09:00:00.000Z' });
    const changed = (await patch({ cron_expression: '*/15 * * * *', timezone: 'Asia/Kolkata', payload: { v: 2 } })).json();
    expect(changed).to.include({ cron_expression: '*/15 * * * *', timezone: 'Asia/Kolkata', next_fire_time: '2026-06-04T12:15:00.000Z' });
    expect(changed.payload).to.deep.equal({ v: 2 });
    const moved = await patch({ metadata: { tenant_id: 'other' } });
    expect(moved.statusCode).to.equal(400);
    expect(moved.json().error.details.field).to.equal('metadata.tenant_id');
    expect((await patch({ cron_expression: 'nope' })).json().error.details.field).to.equal('cron_expression');
    expect((await patch({})).statusCode).to.equal(400);
  });

  it('lists with filters and pagination; 404 for an unknown id on every route', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ name: `c${i}`, enabled: i !== 1 })).json().cron_id);
    const page1 = (await f.app.inject({ method: 'GET', url: '/api/v1/cron-tasks?limit=2' })).json();
    const page2 = (await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks?limit=2&cursor=${page1.next_cursor}` })).json();
    expect([...page1.cron_tasks, ...page2.cron_tasks].map((c: any) => c.cron_id)).to.deep.equal([...ids].reverse());
    const paused = (await f.app.inject({ method: 'GET', url: '/api/v1/cron-tasks?enabled=false' })).json();
    expect(paused.cron_tasks.map((c: any) => c.cron_id)).to.deep.equal([ids[1]]);
    for (const [method, url] of [
      ['GET', '/api/v1/cron-tasks/nope'],
      ['PATCH', '/api/v1/cron-tasks/nope'],
      ['DELETE', '/api/v1/cron-tasks/nope'],
      ['GET', '/api/v1/cron-tasks/nope/runs'],
    ] as const) {
      const res = await f.app.inject({ method, url, ...(method === 'PATCH' ? { payload: { enabled: false } } : {}) });
      expect(res.statusCode, `${method} ${url}`).to.equal(404);
      expect(res.json().error).to.include({ code: 'CRON_NOT_FOUND' });
    }
    expect((await f.app.inject({ method: 'DELETE', url: `/api/v1/cron-tasks/${ids[0]}` })).json()).to.deep.equal({
      cron_id: ids[0],
      deleted: true,
    });
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${ids[0]}` })).statusCode).to.equal(404);
  });

  it('runs: one record per fire time with the instance and its status, paginated', async () => {
    const cron = (await create({ cron_expression: '* * * * * *' })).json();
    const stored = (await f.store.getCron(cron.cron_id))!;
    const times = [1, 2, 3].map((s) => Date.parse(cron.next_fire_time) + (s - 1) * 1000);
    let version = stored;
    for (const t of times) {
      await f.store.fireCrons(
        [
          {
            cronId: cron.cron_id,
            expectedNextFireTime: version.nextFireTime as number,
            expectedVersion: version.version,
            nextFireTime: t + 1000,
            overlapPolicy: 'cancel_running',
            maxQueued: 100,
            instances: [{ fireTime: t, outcome: 'created', reason: null, task: null }],
          },
        ],
        t,
      );
      version = (await f.store.getCron(cron.cron_id))!;
    }
    const page = (await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${cron.cron_id}/runs?limit=2` })).json();
    expect(page.runs).to.have.length(2);
    expect(page.runs[0]).to.include({ fire_time: new Date(times[2]).toISOString(), outcome: 'created' });
    const rest = (await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${cron.cron_id}/runs?cursor=${page.next_cursor}` })).json();
    expect(rest.runs.map((r: any) => r.fire_time)).to.deep.equal([new Date(times[0]).toISOString()]);
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/cron-tasks/${cron.cron_id}/runs?limit=0` })).statusCode).to.equal(400);
  });
});
