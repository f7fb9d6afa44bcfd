import { expect } from 'chai';
import { MAX_CHECKPOINT_BYTES } from '../../src/domain/checkpoint';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

const KEYS = { acme: 'key-acme-cp', globex: 'key-globex-cp', admin: 'key-admin-cp' };
const apiKeys = [
  { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
  { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
  { sha256: hashApiKey(KEYS.admin), admin: true },
];

/**
 * `POST /api/v1/tasks/{id}/checkpoint` and `/progress` of external consumers through
 * `app.inject`, and what GET /api/v1/tasks/{id} shows of them: stored for the running attempt,
 * refused (409) for another attempt, 413 over the cap, 400 naming the field, tenant scoping.
 */
describe('external consumer checkpoints and progress (routes)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture({ apiKeys, redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: { leaseMs: 5000 } } });
  });
  after(() => f.close());

  const call = (method: 'POST' | 'GET', url: string, payload?: unknown, key: string = KEYS.acme) =>
    f.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });

  /** An external task of tenant acme, claimed as the dispatcher does (attempt 1). */
  async function runningExternal(): Promise<string> {
    const res = await call('POST', '/api/v1/tasks', { task_type: 'scan', queue: 'ext' });
    expect(res.statusCode, res.body).to.equal(202);
    const id = res.json().task_id as string;
    expect(await f.store.claimTasks([id], 'external:ext', f.clock.now(), 5000)).to.have.length(1);
    return id;
  }

  it('a task shows no checkpoint and no progress before any report', async () => {
    const id = await runningExternal();
    const t = (await call('GET', `/api/v1/tasks/${id}`)).json();
    expect(t).to.include({ checkpoint: null, progress: null, progress_attempt: null, progress_at: null });
  });

  it("stores the running attempt's checkpoint and progress; GET shows them, a list entry without the value", async () => {
    const id = await runningExternal();
    const cp = await call('POST', `/api/v1/tasks/${id}/checkpoint`, { attempt: 1, value: { cursor: 'abc', n: 500 } });
    expect(cp.statusCode, cp.body).to.equal(200);
    const savedAt = new Date(f.clock.now()).toISOString();
    expect(cp.json()).to.deep.equal({ task_id: id, attempt: 1, saved_at: savedAt, size_bytes: 24 });
    const pg = await call('POST', `/api/v1/tasks/${id}/progress`, {
      attempt: 1,
      progress: { done: 500, total: 2000, message: 'scanning' },
    });
    expect(pg.statusCode, pg.body).to.equal(200);
    expect(pg.json()).to.deep.equal({ task_id: id, attempt: 1, progress_at: savedAt });
    const t = (await call('GET', `/api/v1/tasks/${id}`)).json();
    expect(t.checkpoint).to.deep.equal({ attempt: 1, saved_at: savedAt, size_bytes: 24, value: { cursor: 'abc', n: 500 } });
    expect(t).to.deep.include({ progress: { done: 500, total: 2000, message: 'scanning' }, progress_attempt: 1, progress_at: savedAt });
    const list = (await call('GET', '/api/v1/tasks?task_type=scan&limit=100')).json();
    const entry = list.tasks.find((x: { task_id: string }) => x.task_id === id);
    expect(entry.checkpoint).to.deep.equal({ attempt: 1, saved_at: savedAt, size_bytes: 24 });
    expect(entry.progress).to.deep.equal({ done: 500, total: 2000, message: 'scanning' });
    const fraction = await call('POST', `/api/v1/tasks/${id}/progress`, { attempt: 1, progress: 0.5 });
    expect(fraction.statusCode).to.equal(200);
    expect((await call('GET', `/api/v1/tasks/${id}`)).json().progress).to.equal(0.5);
  });

  it('409 ATTEMPT_CONFLICT for another attempt; nothing stored', async () => {
    const id = await runningExternal();
    for (const [path, body] of [
      ['checkpoint', { attempt: 2, value: 1 }],
      ['progress', { attempt: 2, progress: 0.1 }],
    ] as const) {
      const res = await call('POST', `/api/v1/tasks/${id}/${path}`, body);
      expect(res.statusCode, res.body).to.equal(409);
      expect(res.json().error).to.deep.include({ code: 'ATTEMPT_CONFLICT' });
      expect(res.json().error.details).to.include({ attempt: 2, current_attempt: 1, state: 'RUNNING' });
    }
    expect((await call('GET', `/api/v1/tasks/${id}`)).json()).to.include({ checkpoint: null, progress: null });
  });

  it('413 CHECKPOINT_TOO_LARGE over 64 KiB of JSON, naming value; the previous checkpoint stays', async () => {
    const id = await runningExternal();
    await call('POST', `/api/v1/tasks/${id}/checkpoint`, { attempt: 1, value: { n: 1 } });
    const res = await call('POST', `/api/v1/tasks/${id}/checkpoint`, { attempt: 1, value: 'x'.repeat(MAX_CHECKPOINT_BYTES) });
    expect(res.statusCode, res.body).to.equal(413);
    expect(res.json().error.code).to.equal('CHECKPOINT_TOO_LARGE');
    expect(res.json().error.details).to.include({
      field: 'value',
      limit_bytes: MAX_CHECKPOINT_BYTES,
      actual_bytes: MAX_CHECKPOINT_BYTES + 2,
    });
    expect((await call('GET', `/api/v1/tasks/${id}`)).json().checkpoint.value).to.deep.equal({ n: 1 });
  });

  const bad: Array<[string, string, unknown, string]> = [
    ['checkpoint', 'no value', { attempt: 1 }, 'value'],
    ['checkpoint', 'an unknown field', { attempt: 1, value: 1, extra: true }, 'extra'],
    ['progress', 'no progress', { attempt: 1 }, 'progress'],
    ['progress', 'a fraction above 1', { attempt: 1, progress: 1.5 }, 'progress'],
    ['progress', 'done above total', { attempt: 1, progress: { done: 3, total: 2 } }, 'progress'],
    // An object is named by its own problem, not by the fraction's "must be number".
    ['progress', 'an unknown progress field', { attempt: 1, progress: { pct: 3 } }, 'progress\\.pct$'],
    ['progress', 'a negative done', { attempt: 1, progress: { done: -1 } }, 'progress\\.done$'],
    ['progress', 'a message over 200 characters', { attempt: 1, progress: { message: 'x'.repeat(201) } }, 'progress\\.message$'],
    ['progress', 'an empty object', { attempt: 1, progress: {} }, 'progress$'],
    ['progress', 'a string', { attempt: 1, progress: 'half' }, 'progress'],
  ];
  for (const [path, what, body, field] of bad) {
    it(`${path}: 400 VALIDATION_FAILED for ${what} (field ${field})`, async () => {
      const id = await runningExternal();
      const res = await call('POST', `/api/v1/tasks/${id}/${path}`, body);
      expect(res.statusCode, res.body).to.equal(400);
      expect(res.json().error.code).to.equal('VALIDATION_FAILED');
      expect(String(res.json().error.details.field)).to.match(new RegExp(`^${field}`));
    });
  }

  it("404 for another tenant's task, 409 NOT_EXTERNAL_TASK for a worker task", async () => {
    const id = await runningExternal();
    const other = await call('POST', `/api/v1/tasks/${id}/checkpoint`, { attempt: 1, value: 1 }, KEYS.globex);
    expect(other.statusCode).to.equal(404);
    const res = await call('POST', '/api/v1/tasks', { task_type: 'noop' });
    const worker = await call('POST', `/api/v1/tasks/${res.json().task_id}/progress`, { attempt: 1, progress: 0.5 });
    expect(worker.statusCode).to.equal(409);
    expect(worker.json().error.code).to.equal('NOT_EXTERNAL_TASK');
  });
});
