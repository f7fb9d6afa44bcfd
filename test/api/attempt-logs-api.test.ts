import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { requestAs, TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';
import { AttemptLogWindow } from '../../src/domain/attempt-log';
import { describeError, errorDetail } from '../../src/domain/attempt-error';

describe('REST: attempt logs and attempt errors (app.inject, SQLite store, manual clock)', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ apiKeys });
  });
  afterEach(async () => f.close());
  const as = requestAs(() => f);

  /** Submits a task as `key`'s tenant and starts its first attempt. */
  async function started(key: string): Promise<string> {
    const { task_id } = (await as(key, 'POST', '/api/v1/tasks', { task_type: 'noop' })).json();
    await f.store.markPending([task_id], f.clock.now());
    await f.store.claimTasks([task_id], 'worker-1', f.clock.now(), 60_000);
    return task_id;
  }

  it('GET /api/v1/tasks/{id}/attempts/{n}/logs → the kept lines, oldest first, with the dropped count', async () => {
    const id = await started(KEYS.acme);
    const w = new AttemptLogWindow();
    const at = f.clock.now();
    for (let i = 1; i <= 205; i++) w.add(at + i, `step ${i}`, i === 205 ? { rows: 12 } : undefined);
    await f.store.appendAttemptLogs([{ taskId: id, attempt: 1, ...w.takeNew() }], at);
    const res = await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}/attempts/1/logs`);
    expect(res.statusCode).to.equal(200);
    const log = res.json();
    expect(log).to.include({ task_id: id, attempt: 1, dropped_lines: 5, max_lines: 200, max_bytes: 65_536 });
    expect(log.lines).to.have.length(200);
    expect(log.lines[0]).to.deep.equal({ n: 6, at: new Date(at + 6).toISOString(), message: 'step 6', fields: null, truncated: false });
    expect(log.lines[199]).to.deep.include({ n: 205, message: 'step 205', fields: { rows: 12 } });
  });

  it('an attempt that logged nothing → no lines; an attempt not started → 400 (attempt); bad numbers → 400', async () => {
    const id = await started(KEYS.acme);
    const empty = await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}/attempts/1/logs`);
    expect(empty.json()).to.include({ dropped_lines: 0 }).and.deep.include({ lines: [] });
    for (const n of ['2', '0', 'x', '1.5']) {
      const res = await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}/attempts/${n}/logs`);
      expect(res.statusCode, n).to.equal(400);
      expect(res.json().error.code, n).to.equal('VALIDATION_FAILED');
      expect(res.json().error.details.field, n).to.equal('attempt');
    }
    expect((await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}/attempts/1/logs?tail=5`)).statusCode).to.equal(400);
  });

  it("another tenant's task, or no such task → 404 TASK_NOT_FOUND", async () => {
    const id = await started(KEYS.acme);
    const other = await as(KEYS.globex, 'GET', `/api/v1/tasks/${id}/attempts/1/logs`);
    expect(other.statusCode).to.equal(404);
    expect(other.json().error.code).to.equal('TASK_NOT_FOUND');
    expect((await as(KEYS.admin, 'GET', `/api/v1/tasks/${id}/attempts/1/logs`)).statusCode).to.equal(200);
    expect((await as(KEYS.admin, 'GET', '/api/v1/tasks/nope/attempts/1/logs')).statusCode).to.equal(404);
  });

  it('GET /api/v1/tasks/{id} shows the error with code, cause chain, stack and http_status beside message and type', async () => {
    const id = await started(KEYS.acme);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9999'), { code: 'ECONNREFUSED' });
    const d = describeError(new TypeError('fetch failed', { cause: refused }));
    const error = { message: d.message, type: d.type, retryable: true, ...errorDetail(d) };
    await f.store.completeAttempts(
      [{ taskId: id, attempt: 1, state: 'RETRYING', retryAt: f.clock.now() + 60_000, result: null, error, durationMs: 3 }],
      f.clock.now(),
    );
    const t = (await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}?include=attempts`)).json();
    expect(t.error).to.include({ message: 'fetch failed', type: 'TypeError', retryable: true });
    expect(t.error.cause).to.deep.equal({ message: 'connect ECONNREFUSED 127.0.0.1:9999', type: 'Error', code: 'ECONNREFUSED' });
    expect(t.error.stack).to.match(/^TypeError: fetch failed/);
    expect(t.attempt_history[0].error).to.deep.equal(t.error);
    // A list page leaves the stack out (up to 4 KiB per task); the rest is there.
    const listed = (await as(KEYS.acme, 'GET', '/api/v1/tasks')).json().tasks.find((x: any) => x.task_id === id);
    const { stack: _stack, ...withoutStack } = t.error;
    expect(listed.error).to.deep.equal(withoutStack);
  });
});
