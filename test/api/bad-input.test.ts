import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** Every bad input gets `{error: {code, message, details}}` naming the field, and nothing is lost. */
describe('REST: bad input gets a clear error and loses nothing', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ bodyLimitBytes: 4096 });
  });

  const post = (url: string, payload: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    f.app.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

  function expectError(res: { statusCode: number; json(): any }, status: number, code: string, field?: string): any {
    expect(res.statusCode, JSON.stringify(res.json())).to.equal(status);
    const body = res.json();
    expect(body).to.have.property('error');
    expect(body.error.code).to.equal(code);
    expect(body.error.message).to.be.a('string').with.length.above(0);
    expect(body.error.details).to.be.an('object');
    if (field !== undefined) expect(body.error.details.field).to.equal(field);
    return body.error;
  }

  async function expectNothingStored(): Promise<void> {
    const counts = await f.store.countByState();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
    expect(f.stored).to.have.length(0);
  }

  afterEach(async () => {
    // the service keeps serving after each bad request
    const ok = await f.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: { 'content-type': 'application/json' },
      payload: '{"task_type":"noop"}',
    });
    expect(ok.statusCode).to.equal(202);
  });
  afterEach(async () => f.close());

  it('malformed JSON → 400 MALFORMED_JSON', async () => {
    expectError(await post('/api/v1/tasks', '{"task_type": "noop",'), 400, 'MALFORMED_JSON', 'body');
    await expectNothingStored();
  });

  it('missing task_type → 400 naming task_type', async () => {
    expectError(await post('/api/v1/tasks', { payload: {} }), 400, 'VALIDATION_FAILED', 'task_type');
    await expectNothingStored();
  });

  it('a body that is not an object → 400', async () => {
    expectError(await post('/api/v1/tasks', [1, 2]), 400, 'VALIDATION_FAILED', 'body');
    expectError(await post('/api/v1/tasks', 'null'), 400, 'VALIDATION_FAILED');
  });

  it('wrong types → 400 naming the field (no coercion of "3" into 3)', async () => {
    expectError(await post('/api/v1/tasks', { task_type: 'noop', max_retries: '3' }), 400, 'VALIDATION_FAILED', 'max_retries');
    expectError(await post('/api/v1/tasks', { task_type: 42 }), 400, 'VALIDATION_FAILED', 'task_type');
    expectError(await post('/api/v1/tasks', { task_type: 'noop', metadata: 'x' }), 400, 'VALIDATION_FAILED', 'metadata');
    expectError(
      await post('/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: 7 } }),
      400,
      'VALIDATION_FAILED',
      'metadata.tenant_id',
    );
    await expectNothingStored();
  });

  it("the schema's rules are worded for people, not as the validator's keywords", async () => {
    const reason = async (method: 'POST' | 'PATCH', url: string, body: unknown) =>
      expectError(
        await f.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
        400,
        'VALIDATION_FAILED',
      ).details.reason;
    expect(await reason('POST', '/api/v1/tasks', { task_type: 'noop', max_retries: '3' })).to.equal('must be a whole number');
    expect(await reason('POST', '/api/v1/tasks', { task_type: 'noop', metadata: 'x' })).to.equal('must be a JSON object');
    expect(await reason('POST', '/api/v1/tasks', { task_type: '' })).to.equal('must not be empty');
    expect(await reason('POST', '/api/v1/cron-tasks', { name: 'n', cron_expression: '', task_type: 'noop' })).to.equal('must not be empty');
    expect(await reason('PATCH', '/api/v1/tasks/01a24fb9-d2f3-7321-a516-b8911a4eb5ed', {})).to.equal('must name at least one field');
    expect(await reason('POST', '/api/v1/tasks/batch', { tasks: [] })).to.equal('must not be empty: give at least one item');
    await expectNothingStored();
  });

  it('unknown priority → 400 listing the allowed values', async () => {
    const e = expectError(await post('/api/v1/tasks', { task_type: 'noop', priority: 'urgent' }), 400, 'VALIDATION_FAILED', 'priority');
    expect(e.details.reason).to.contain('high').and.contain('medium').and.contain('low');
  });

  it('unknown retry_backoff → 400', async () => {
    expectError(await post('/api/v1/tasks', { task_type: 'noop', retry_backoff: 'random' }), 400, 'VALIDATION_FAILED', 'retry_backoff');
  });

  it('scheduled_at without a UTC offset → 400', async () => {
    const e = expectError(
      await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: '2026-06-01T12:00:00' }),
      400,
      'VALIDATION_FAILED',
      'scheduled_at',
    );
    expect(e.details.reason).to.contain('offset');
  });

  it('unparseable scheduled_at → 400', async () => {
    expectError(await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: 'tomorrow' }), 400, 'VALIDATION_FAILED', 'scheduled_at');
    expectError(
      await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: '2026-13-45T99:00:00Z' }),
      400,
      'VALIDATION_FAILED',
      'scheduled_at',
    );
    await expectNothingStored();
  });

  it('negative max_retries or timeout_seconds → 400', async () => {
    expectError(await post('/api/v1/tasks', { task_type: 'noop', max_retries: -1 }), 400, 'VALIDATION_FAILED', 'max_retries');
    expectError(await post('/api/v1/tasks', { task_type: 'noop', timeout_seconds: -5 }), 400, 'VALIDATION_FAILED', 'timeout_seconds');
    expectError(await post('/api/v1/tasks', { task_type: 'noop', timeout_seconds: 0 }), 400, 'VALIDATION_FAILED', 'timeout_seconds');
    expectError(
      await post('/api/v1/tasks', { task_type: 'noop', retry_delay_seconds: -1 }),
      400,
      'VALIDATION_FAILED',
      'retry_delay_seconds',
    );
    await expectNothingStored();
  });

  it('an unknown field → 400 naming it (typos are not silently ignored)', async () => {
    expectError(
      await post('/api/v1/tasks', { task_type: 'noop', schedule_at: '2026-06-01T12:00:00Z' }),
      400,
      'VALIDATION_FAILED',
      'schedule_at',
    );
  });

  it('unregistered task_type → 400 listing the registered types', async () => {
    const e = expectError(await post('/api/v1/tasks', { task_type: 'send_email' }), 400, 'UNKNOWN_TASK_TYPE', 'task_type');
    expect(e.details.registered_types).to.include.members(['noop', 'echo', 'sleep', 'fail', 'http']);
    await expectNothingStored();
  });

  it('a body over the size cap → 413', async () => {
    expectError(await post('/api/v1/tasks', { task_type: 'echo', payload: 'x'.repeat(5000) }), 413, 'PAYLOAD_TOO_LARGE', 'body');
    await expectNothingStored();
  });

  it('a non-JSON content type → 415 (text/plain too), and a charset other than UTF-8 → 415', async () => {
    expectError(
      await post('/api/v1/tasks', 'task_type=noop', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(await post('/api/v1/tasks', '{"task_type":"noop"}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(
      await post('/api/v1/tasks', '{"task_type":"noop"}', { 'content-type': 'application/json; charset=latin1' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    await expectNothingStored();
  });

  it('a compressed body (Content-Encoding other than identity) → 415 naming content-encoding, even when it happens to parse', async () => {
    for (const encoding of ['gzip', 'br', 'GZIP, identity']) {
      const e = expectError(
        await post('/api/v1/tasks', '{"task_type":"noop"}', { 'content-type': 'application/json', 'content-encoding': encoding }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'content-encoding',
      );
      expect(e.message).to.match(/send the body uncompressed/);
    }
    await expectNothingStored();
    expect(
      (await post('/api/v1/tasks', '{"task_type":"noop"}', { 'content-type': 'application/json', 'content-encoding': 'identity' }))
        .statusCode,
    ).to.equal(202);
  });

  it('a body that is not valid UTF-8 → 400 MALFORMED_JSON (never stored with replacement characters)', async () => {
    const body = Buffer.concat([Buffer.from('{"task_type":"echo","payload":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await f.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    expectError(res, 400, 'MALFORMED_JSON', 'body');
    await expectNothingStored();
  });

  it('a payload nested deeper than 64 levels → 400 naming payload (10,000 levels do not crash anything)', async () => {
    const deep = (n: number) => `{"task_type":"echo","payload":${'['.repeat(n)}${']'.repeat(n)}}`;
    const big = await apiFixture({ bodyLimitBytes: 1 << 20 });
    try {
      for (const n of [65, 3000, 10_000]) {
        const res = await big.app.inject({
          method: 'POST',
          url: '/api/v1/tasks',
          headers: { 'content-type': 'application/json' },
          payload: deep(n),
        });
        expectError(res, 400, 'VALIDATION_FAILED', 'payload');
      }
      const ok = await big.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { 'content-type': 'application/json' },
        payload: deep(64),
      });
      expect(ok.statusCode).to.equal(202);
      const batch = JSON.stringify({ tasks: [{ task_type: 'noop' }, JSON.parse(deep(100))] });
      expectError(
        await big.app.inject({
          method: 'POST',
          url: '/api/v1/tasks/batch',
          headers: { 'content-type': 'application/json' },
          payload: batch,
        }),
        400,
        'VALIDATION_FAILED',
        'tasks[1].payload',
      );
    } finally {
      await big.close();
    }
  });

  it('a number beyond the range of a double → 400 naming it (never stored as null); large finite numbers and look-alike strings pass', async () => {
    expectError(await post('/api/v1/tasks', '{"task_type":"noop","payload":{"n":1e400}}'), 400, 'VALIDATION_FAILED', 'payload.n');
    expectError(
      await post('/api/v1/tasks', '{"task_type":"noop","payload":{"list":[1,-1E+400]}}'),
      400,
      'VALIDATION_FAILED',
      'payload.list[1]',
    );
    expectError(await post('/api/v1/tasks', `{"task_type":"noop","payload":${'9'.repeat(400)}}`), 400, 'VALIDATION_FAILED', 'payload');
    expectError(
      await post('/api/v1/tasks/batch', '{"tasks":[{"task_type":"noop"},{"task_type":"noop","metadata":{"x":2e999}}]}'),
      400,
      'VALIDATION_FAILED',
      'tasks[1].metadata.x',
    );
    expectError(await post('/api/v1/tasks', '1e400'), 400, 'VALIDATION_FAILED', 'body');
    await expectNothingStored();
    const ok = await post(
      '/api/v1/tasks',
      `{"task_type":"noop","payload":{"big":1.7e308,"tiny":1e-400,"s":"1e400","digits":${'9'.repeat(308)}}}`,
    );
    expect(ok.statusCode).to.equal(202);
    const task = (await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${ok.json().task_id}` })).json();
    expect(task.payload).to.deep.equal({ big: 1.7e308, tiny: 0, s: '1e400', digits: Number('9'.repeat(308)) });
  });

  it('a number beyond a double 50,000 objects deep → 400 quoting at most 200 characters of its path', async () => {
    const depth = 50_000;
    const body = `{"task_type":"noop","payload":${'{"aaaaaaaaaaaaa":'.repeat(depth)}1e400${'}'.repeat(depth)}}`;
    const big = await apiFixture({ bodyLimitBytes: 1 << 20 });
    try {
      const res = await big.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      expect(res.statusCode).to.equal(400);
      const { error } = res.json();
      expect(error.code).to.equal('VALIDATION_FAILED');
      expect(error.details.field).to.have.length.at.most(201);
      expect(error.details.field.startsWith('payload.aaaaaaaaaaaaa.aaaaaaaaaaaaa')).to.equal(true);
      expect(res.body.length, 'the answer, not 1.4 MB of path').to.be.below(2000);
    } finally {
      await big.close();
    }
  });

  it('a date that does not exist → 400, never rolled over into another day', async () => {
    for (const at of [
      '2026-02-30T00:00:00Z',
      '2027-02-29T00:00:00Z',
      '2026-04-31T10:00:00Z',
      '2026-12-31T24:00:00Z',
      '2026-06-01T12:60:00Z',
      '2026-06-01T12:00:00+24:00',
    ]) {
      expectError(await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: at }), 400, 'VALIDATION_FAILED', 'scheduled_at');
    }
    await expectNothingStored();
    const leap = await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: '2028-02-29T23:59:59.999-05:30' });
    expect(leap.statusCode).to.equal(202);
    expect(leap.json().scheduled_at).to.equal('2028-03-01T05:29:59.999Z');
  });

  it('keys named __proto__ → 400 naming the body (not a silent removal)', async () => {
    expectError(await post('/api/v1/tasks', '{"task_type":"echo","payload":{"__proto__":{"x":1}}}'), 400, 'VALIDATION_FAILED', 'body');
    await expectNothingStored();
  });

  it('URL errors before routing keep the error envelope; a very long unknown id → 404', async () => {
    expectError(await f.app.inject({ method: 'GET', url: '/api/v1/tasks/%zz' }), 400, 'VALIDATION_FAILED', 'url');
    expectError(await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${'a'.repeat(500)}` }), 404, 'TASK_NOT_FOUND');
  });

  it('an id over 1,000 characters → 400 naming the url, without quoting the URL back', async () => {
    for (const [method, url] of [
      ['GET', `/api/v1/tasks/${'a'.repeat(5000)}`],
      ['POST', `/api/v1/tasks/${'b'.repeat(1001)}/cancel`],
    ] as const) {
      const e = expectError(await f.app.inject({ method, url }), 400, 'VALIDATION_FAILED', 'url');
      expect(e.message).to.equal('url: a path parameter is longer than 1000 characters');
      expect(JSON.stringify(e)).to.not.include('aaaa').and.not.include('bbbb');
    }
    // A bad URL is quoted, but at most 200 characters of its message.
    const e = expectError(
      await f.app.inject({ method: 'GET', url: `/api/v1/tasks/%zz${'c'.repeat(900)}` }),
      400,
      'VALIDATION_FAILED',
      'url',
    );
    expect(e.details.reason.length).to.be.at.most(201);
    expect(e.message.length).to.be.at.most(206);
  });

  it('unknown task id → 404 TASK_NOT_FOUND (get and cancel)', async () => {
    expectError(await f.app.inject({ method: 'GET', url: '/api/v1/tasks/nope' }), 404, 'TASK_NOT_FOUND');
    expectError(await f.app.inject({ method: 'POST', url: '/api/v1/tasks/nope/cancel' }), 404, 'TASK_NOT_FOUND');
  });

  it('a body on an action without one (cancel, replay, workflow cancel, deletes) → 400 naming its field; the task is untouched', async () => {
    const { task_id } = (await post('/api/v1/tasks', { task_type: 'noop', scheduled_at: '2026-06-01T13:00:00Z' })).json();
    const json = { 'content-type': 'application/json' };
    for (const url of [`/api/v1/tasks/${task_id}/cancel`, `/api/v1/dead-letter/${task_id}/replay`, '/api/v1/workflows/nope/cancel']) {
      expectError(await post(url, { reason: 'too slow' }, json), 400, 'VALIDATION_FAILED', 'reason');
      expectError(await post(url, [1], json), 400, 'VALIDATION_FAILED', 'body');
      expectError(await post(url, '"x"', json), 400, 'VALIDATION_FAILED', 'body');
    }
    // A long key is quoted cut to 200 characters; an empty key names the body.
    const long = expectError(await post(`/api/v1/tasks/${task_id}/cancel`, { ['k'.repeat(3000)]: 1 }, json), 400, 'VALIDATION_FAILED');
    expect(long.details.field).to.have.length(201);
    expect(JSON.stringify(long).length).to.be.below(1000);
    expectError(await post(`/api/v1/tasks/${task_id}/cancel`, { '': 1 }, json), 400, 'VALIDATION_FAILED', 'body');
    for (const url of ['/api/v1/cron-tasks/nope', `/api/v1/dead-letter/${task_id}`, '/api/v1/rate-limits/noop']) {
      const res = await f.app.inject({ method: 'DELETE', url, headers: json, payload: JSON.stringify({ force: true }) });
      expectError(res, 400, 'VALIDATION_FAILED', 'force');
    }
    expect((await f.store.getTask(task_id))?.state).to.equal('SCHEDULED');
    // No body, or an empty object, is an ordinary cancel.
    expect((await post(`/api/v1/tasks/${task_id}/cancel`, {}, json)).statusCode).to.equal(200);
    expect((await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${task_id}/cancel` })).statusCode).to.equal(409);
  });

  it('unknown route → 404 ROUTE_NOT_FOUND', async () => {
    expectError(await f.app.inject({ method: 'GET', url: '/api/v2/tasks' }), 404, 'ROUTE_NOT_FOUND');
    // A long unknown URL is quoted back cut to 200 characters, not in full.
    const e = expectError(await f.app.inject({ method: 'GET', url: `/${'z'.repeat(14000)}` }), 404, 'ROUTE_NOT_FOUND');
    expect(JSON.stringify(e).length).to.be.below(1000);
  });

  it('a known path asked with a method it does not answer → 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const put = await f.app.inject({ method: 'PUT', url: '/api/v1/tasks', headers: { 'content-type': 'application/json' }, payload: '{}' });
    const e = expectError(put, 405, 'METHOD_NOT_ALLOWED');
    expect(put.headers.allow).to.equal('GET, HEAD, POST');
    expect(e.details).to.deep.include({ method: 'PUT', url: '/api/v1/tasks', allowed: ['GET', 'HEAD', 'POST'] });
    // A path with a parameter, and a path answered by one method only.
    const del = await f.app.inject({ method: 'DELETE', url: '/api/v1/tasks/01a24fb9-d2f3-7321-a516-b8911a4eb5ed/cancel?x=1' });
    expect(expectError(del, 405, 'METHOD_NOT_ALLOWED').details.allowed).to.deep.equal(['POST']);
    expect(del.headers.allow).to.equal('POST');
    // An unknown path stays 404, whatever the method.
    expectError(await f.app.inject({ method: 'PUT', url: '/api/v1/nothing-here' }), 404, 'ROUTE_NOT_FOUND');
  });

  it('a batch over 1,000 tasks → 400 naming tasks; nothing stored', async () => {
    const tasks = Array.from({ length: 1001 }, () => ({ task_type: 'noop' }));
    const big = await apiFixture({ bodyLimitBytes: 1 << 20 });
    try {
      const res = await big.app.inject({
        method: 'POST',
        url: '/api/v1/tasks/batch',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ tasks }),
      });
      expectError(res, 400, 'VALIDATION_FAILED', 'tasks');
      expect(big.stored).to.have.length(0);
    } finally {
      await big.close();
    }
  });

  it('a batch with one bad item → 400 naming tasks[i].field; none of the batch is stored', async () => {
    const res = await post('/api/v1/tasks/batch', { tasks: [{ task_type: 'noop' }, { task_type: 'noop', priority: 'urgent' }] });
    expectError(res, 400, 'VALIDATION_FAILED', 'tasks[1].priority');
    const res2 = await post('/api/v1/tasks/batch', { tasks: [{ task_type: 'noop' }, { task_type: 'nope' }] });
    expectError(res2, 400, 'UNKNOWN_TASK_TYPE', 'tasks[1].task_type');
    expectError(await post('/api/v1/tasks/batch', { tasks: [] }), 400, 'VALIDATION_FAILED', 'tasks');
    await expectNothingStored();
  });

  it('bad list parameters → 400 naming the query field', async () => {
    const limitAbc = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?limit=abc' });
    const limitZero = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?limit=0' });
    expectError(limitAbc, 400, 'VALIDATION_FAILED', 'limit');
    expectError(limitZero, 400, 'VALIDATION_FAILED', 'limit');
    expect(limitZero.json().error.message, 'one wording for both').to.equal(limitAbc.json().error.message);
    expectError(await f.app.inject({ method: 'GET', url: '/api/v1/tasks?status=DONE' }), 400, 'VALIDATION_FAILED', 'status');
    expectError(await f.app.inject({ method: 'GET', url: '/api/v1/tasks?cursor=garbage' }), 400, 'VALIDATION_FAILED', 'cursor');
    // Given twice, a parameter arrives as an array: the message says so (not "must be string").
    for (const url of [
      '/api/v1/tasks?limit=1&limit=2',
      '/api/v1/tasks?status=PENDING&status=RUNNING',
      '/api/v1/dead-letter?limit=5&limit=5',
    ]) {
      const field = url.includes('status=') ? 'status' : 'limit';
      expect(expectError(await f.app.inject({ method: 'GET', url }), 400, 'VALIDATION_FAILED', field).message).to.equal(
        `${field}: is given more than once: give it once`,
      );
    }
  });

  it('an unknown field or parameter with a 5,000-character name is named cut to 200 characters; an empty parameter name is `query`', async () => {
    const long = 'a'.repeat(5000);
    const { task_id } = await f.service.submit({ task_type: 'noop' });
    for (const [method, url, payload] of [
      ['GET', `/api/v1/tasks/${task_id}?${long}=1`, undefined],
      ['GET', `/api/v1/tasks?${long}=1`, undefined],
      ['POST', `/api/v1/cron-tasks?${long}=1`, { name: 'n', cron_expression: '* * * * *', task_type: 'noop' }],
      ['POST', '/api/v1/tasks', { task_type: 'noop', [long.slice(0, 3000)]: 1 }], // the fixture's body limit is 4 KiB
    ] as const) {
      const err = expectError(await f.app.inject({ method, url, payload }), 400, 'VALIDATION_FAILED');
      expect(err.details.field.length, url).to.be.at.most(201);
      expect(err.message.length, url).to.be.below(400);
    }
    for (const url of ['/api/v1/tasks?=1', '/api/v1/dead-letter?=', '/api/v1/workflows/x?=1']) {
      expectError(await f.app.inject({ method: 'GET', url }), 400, 'VALIDATION_FAILED', 'query');
    }
    expectError(
      await f.app.inject({
        method: 'POST',
        url: '/api/v1/cron-tasks?=1',
        payload: { name: 'n', cron_expression: '* * * * *', task_type: 'noop' },
      }),
      400,
      'VALIDATION_FAILED',
      'query',
    );
    const twice = expectError(
      await f.app.inject({
        method: 'POST',
        url: '/api/v1/cron-tasks?preview=2&preview=2',
        payload: { name: 'n', cron_expression: '* * * * *', task_type: 'noop' },
      }),
      400,
      'VALIDATION_FAILED',
      'preview',
    );
    expect(twice.message).to.equal('preview: is given more than once: give it once');
  });

  it('a date whose offset carries it past year 9999 (or before year 0) in UTC → 400 naming it, not an answer the API cannot read back', async () => {
    const err = expectError(
      await f.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        payload: { task_type: 'noop', scheduled_at: '9999-12-31T23:59:59-01:00' },
      }),
      400,
      'VALIDATION_FAILED',
      'scheduled_at',
    );
    expect(err.message).to.include('years 0000–9999 UTC');
    expectError(
      await f.app.inject({
        method: 'POST',
        url: '/api/v1/cron-tasks/preview',
        payload: { cron_expression: '* * * * *', from: '0000-01-01T00:00:00+01:00' },
      }),
      400,
      'VALIDATION_FAILED',
      'from',
    );
    expect(Object.values(await f.store.countByState()).reduce((a, b) => a + b, 0)).to.equal(0);
  });

  it('a query parameter on an /api/ route that takes none → 400 naming it, nothing done; probes and /metrics ignore them', async () => {
    const { task_id } = await f.service.submit({ task_type: 'noop' });
    const cases: Array<[string, string]> = [
      ['GET', '/api/v1/audit?x=1'],
      ['GET', '/api/v1/tenants?limit=5'],
      ['GET', '/api/v1/rate-limits?task_type=noop'],
      ['GET', '/api/v1/workflows/nope?x=1'],
      ['POST', `/api/v1/tasks/${task_id}/cancel?reason=x`],
      ['POST', '/api/v1/tasks?dry_run=1'],
    ];
    for (const [method, url] of cases) {
      const field = url.split('?')[1].split('=')[0];
      const err = expectError(
        await f.app.inject({
          method: method as 'GET' | 'POST',
          url,
          payload: method === 'POST' && url.endsWith('dry_run=1') ? { task_type: 'noop' } : undefined,
        }),
        400,
        'VALIDATION_FAILED',
        field,
      );
      expect(err.message, url).to.include('is not a known field');
    }
    expect((await f.store.getTask(task_id))?.state).to.equal('PENDING'); // the cancel did not happen
    expect(Object.values(await f.store.countByState()).reduce((a, b) => a + b, 0)).to.equal(1); // nor the submission
    expect((await f.app.inject({ method: 'GET', url: '/api/v1/audit' })).statusCode).to.equal(200);
    expect((await f.app.inject({ method: 'GET', url: '/healthz?probe=1' })).statusCode).to.equal(200);
    expect((await f.app.inject({ method: 'GET', url: '/metrics?x=1' })).statusCode).to.equal(200);
  });
});
