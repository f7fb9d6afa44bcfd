import { expect } from 'chai';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

const KEYS = { acme: 'key-acme-ext', globex: 'key-globex-ext', admin: 'key-admin-ext' };
const apiKeys = [
  { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
  { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
  { sha256: hashApiKey(KEYS.admin), admin: true },
];

/**
 * `POST /api/v1/tasks/{id}/complete` and `/heartbeat` (external queues, issue 7) through
 * `app.inject`: validation (400 with the field), 404, the 409 cases (not external, not the
 * running attempt), tenant scoping. No dispatcher runs here: a valid completion of the running
 * attempt answers 503; the full path is in test/integration/external-queues.test.ts.
 */
describe('external consumer reports (routes)', () => {
  let f: ApiFixture;
  before(async () => {
    // redisUrl is required with external queues; nothing connects to it in this fixture.
    f = await apiFixture({ apiKeys, redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: { leaseMs: 5000 } } });
  });
  after(() => f.close());

  const post = (url: string, payload: unknown, key: string = KEYS.admin, contentType = 'application/json') =>
    f.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });

  async function submit(body: Record<string, unknown>, key: string = KEYS.acme): Promise<string> {
    const res = await post('/api/v1/tasks', body, key);
    expect(res.statusCode, res.body).to.equal(202);
    return res.json().task_id as string;
  }

  /** An external task claimed like the dispatcher does (attempt 1, worker `external:ext`). */
  async function runningExternal(): Promise<string> {
    const id = await submit({ task_type: 'send_sms', queue: 'ext', payload: { to: '+1' } });
    const claimed = await f.store.claimTasks([id], 'external:ext', f.clock.now(), 5000);
    expect(claimed).to.have.length(1);
    return id;
  }

  it('accepts a task type without a handler on an external queue, and refuses it elsewhere', async () => {
    await submit({ task_type: 'send_sms', queue: 'ext' });
    const res = await post('/api/v1/tasks', { task_type: 'send_sms' }, KEYS.acme);
    expect(res.statusCode).to.equal(400);
    expect(res.json().error.code).to.equal('UNKNOWN_TASK_TYPE');
  });

  it('a rate limit on a type only an external queue serves is accepted (it was 400 UNKNOWN_TASK_TYPE)', async () => {
    const put = await f.app.inject({
      method: 'PUT',
      url: '/api/v1/rate-limits/send_sms',
      headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ rate_per_second: 1 }),
    });
    expect(put.statusCode, put.body).to.equal(200);
    expect(put.json()).to.deep.include({ task_type: 'send_sms', rate_per_second: 1 });
  });

  const badBodies: Array<[string, unknown, string]> = [
    ['no body', undefined, 'body'],
    ['an array', [], 'body'],
    ['no attempt', { result: 1 }, 'attempt'],
    ['attempt as a string', { attempt: '1' }, 'attempt'],
    ['attempt 0', { attempt: 0 }, 'attempt'],
    ['a fractional attempt', { attempt: 1.5 }, 'attempt'],
    ['an unknown field', { attempt: 1, status: 'ok' }, 'status'],
    ['error without message', { attempt: 1, error: {} }, 'error.message'],
    ['error.permanent not a boolean', { attempt: 1, error: { message: 'x', permanent: 'yes' } }, 'error.permanent'],
    ['an unknown error field', { attempt: 1, error: { message: 'x', reason: 'y' } }, 'error.reason'],
    ['error.code not a string', { attempt: 1, error: { message: 'x', code: 7 } }, 'error.code'],
    ['error.code holding NUL', { attempt: 1, error: { message: 'x', code: 'E\u0000' } }, 'error.code'],
    ['error.stack not a string', { attempt: 1, error: { message: 'x', stack: ['at a'] } }, 'error.stack'],
    ['result and error together', { attempt: 1, result: 1, error: { message: 'x' } }, 'error'],
  ];
  for (const [what, body, field] of badBodies) {
    it(`complete: 400 VALIDATION_FAILED for ${what} (field ${field})`, async () => {
      const id = await runningExternal();
      const res = await post(`/api/v1/tasks/${id}/complete`, body);
      expect(res.statusCode, res.body).to.equal(400);
      expect(res.json().error.code).to.equal('VALIDATION_FAILED');
      expect(res.json().error.details.field).to.equal(field);
      expect((await f.store.getTask(id))?.state).to.equal('RUNNING');
    });
  }

  it('complete: 400 MALFORMED_JSON for a body that is not JSON, 415 for another content type', async () => {
    const id = await runningExternal();
    const bad = await post(`/api/v1/tasks/${id}/complete`, '{"attempt": 1', KEYS.admin);
    expect(bad.statusCode).to.equal(400);
    expect(bad.json().error.code).to.equal('MALFORMED_JSON');
    const other = await post(`/api/v1/tasks/${id}/complete`, 'attempt=1', KEYS.admin, 'application/x-www-form-urlencoded');
    expect(other.statusCode).to.equal(415);
  });

  it('complete: 400 for a result nested deeper than 64 levels', async () => {
    const id = await runningExternal();
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    const res = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: deep });
    expect(res.statusCode).to.equal(400);
    expect(res.json().error.details.field).to.equal('result');
  });

  it('complete: 404 TASK_NOT_FOUND for an unknown task', async () => {
    const res = await post('/api/v1/tasks/no-such-task/complete', { attempt: 1 });
    expect(res.statusCode).to.equal(404);
    expect(res.json().error.code).to.equal('TASK_NOT_FOUND');
  });

  it("complete and heartbeat: another tenant's task is 404, as if it did not exist", async () => {
    const id = await runningExternal(); // acme's
    for (const path of ['complete', 'heartbeat']) {
      const res = await post(`/api/v1/tasks/${id}/${path}`, { attempt: 1 }, KEYS.globex);
      expect(res.statusCode, path).to.equal(404);
      expect(res.json().error.code).to.equal('TASK_NOT_FOUND');
    }
    const own = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 1 }, KEYS.acme);
    expect(own.statusCode, own.body).to.equal(200);
  });

  it('complete: 409 NOT_EXTERNAL_TASK for a task of a worker queue', async () => {
    const id = await submit({ task_type: 'noop' });
    await f.store.claimTasks([id], 'worker-1', f.clock.now(), 5000);
    const res = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1 });
    expect(res.statusCode).to.equal(409);
    expect(res.json().error.code).to.equal('NOT_EXTERNAL_TASK');
    expect(res.json().error.details).to.include({ task_id: id, queue: 'default' });
  });

  it('complete: 409 ATTEMPT_CONFLICT for a task not running, or another attempt than the running one', async () => {
    const waiting = await submit({ task_type: 'send_sms', queue: 'ext' });
    const notRunning = await post(`/api/v1/tasks/${waiting}/complete`, { attempt: 1 });
    expect(notRunning.statusCode).to.equal(409);
    expect(notRunning.json().error).to.deep.include({ code: 'ATTEMPT_CONFLICT' });
    expect(notRunning.json().error.details).to.include({ state: 'PENDING', attempt: 1, current_attempt: 0 });

    const id = await runningExternal();
    const wrong = await post(`/api/v1/tasks/${id}/complete`, { attempt: 2, result: 'x' });
    expect(wrong.statusCode).to.equal(409);
    expect(wrong.json().error.code).to.equal('ATTEMPT_CONFLICT');
    expect(wrong.json().error.details).to.include({ state: 'RUNNING', attempt: 2, current_attempt: 1 });
    expect((await f.store.getTask(id))?.state).to.equal('RUNNING');
  });

  it('logs: 400 naming lines[i].fields for fields nested deeper than 64 levels (as a payload), 200 at 64', async () => {
    const id = await runningExternal();
    const nested = (depth: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = { a: v };
      return v;
    };
    const deep = await post(`/api/v1/tasks/${id}/logs`, {
      attempt: 1,
      lines: [
        { level: 'info', msg: 'ok' },
        { level: 'info', msg: 'x', fields: nested(1900) },
      ],
    });
    expect(deep.statusCode, deep.body).to.equal(400);
    expect(deep.json().error.details).to.deep.include({ field: 'lines[1].fields' });
    const fits = await post(`/api/v1/tasks/${id}/logs`, { attempt: 1, lines: [{ level: 'info', msg: 'x', fields: nested(64) }] });
    expect(fits.statusCode, fits.body).to.equal(200);
  });

  it('logs: a NUL and each lone surrogate in msg are kept as one U+FFFD each (a pair stays); read back as such', async () => {
    const id = await runningExternal();
    // Raw JSON text: the escapes reach the parser as a client's JSON.stringify sends them.
    const text =
      '{"attempt":1,"lines":[{"level":"info","msg":"a\\u0000b\\ud800c"},{"level":"info","msg":"\\udfff|\\ud83d\\ude00|\\ud800"}]}';
    const res = await post(`/api/v1/tasks/${id}/logs`, text);
    expect(res.statusCode, res.body).to.equal(200);
    const read = await f.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${id}/attempts/1/logs`,
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    expect(read.statusCode, read.body).to.equal(200);
    expect(read.json().lines.map((l: { message: string }) => l.message)).to.deep.equal(['a\uFFFDb\uFFFDc', '\uFFFD|\u{1F600}|\uFFFD']);
  });

  it('complete: 503 without a dispatcher (nothing changes)', async () => {
    const id = await runningExternal();
    const res = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: { ok: true } });
    expect(res.statusCode).to.equal(503);
    expect((await f.store.getTask(id))?.state).to.equal('RUNNING');
  });

  it('heartbeat: extends the lease of the running attempt by the queue leaseMs; 400, 409 otherwise', async () => {
    const id = await runningExternal();
    f.clock.advance(1000);
    const ok = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 1 });
    expect(ok.statusCode, ok.body).to.equal(200);
    expect(ok.json()).to.deep.equal({ task_id: id, attempt: 1, lease_expires_at: new Date(f.clock.now() + 5000).toISOString() });
    // The lease now ends 6 s after the claim, not 5 s.
    expect((await f.store.findExpiredLeases(f.clock.now() + 4500, 1000)).map((o) => o.taskId)).to.not.include(id);
    expect((await f.store.findExpiredLeases(f.clock.now() + 5500, 1000)).map((o) => o.taskId)).to.include(id);

    const bad = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 1, extra: true });
    expect(bad.statusCode).to.equal(400);
    expect(bad.json().error.details.field).to.equal('extra');
    const stale = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 3 });
    expect(stale.statusCode).to.equal(409);
    expect(stale.json().error.code).to.equal('ATTEMPT_CONFLICT');
  });
});
