import { expect } from 'chai';
import type { StoreFault } from '../../src/storage/store-health';
import { storeUnavailable } from '../../src/storage/store-health';
import type { ExternalGateway, LeasedAttempt } from '../../src/services/ports';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * External consumers while the store is away (a full disk here): a completion and a lease request
 * answer 503 `STORE_UNAVAILABLE` with `Retry-After`, as every other report does, never a 500 or
 * an empty lease that looks like an idle queue.
 */
describe('external consumers while the store has a fault (routes)', () => {
  let f: ApiFixture;
  /** What the stand-in dispatcher does: a completion fails as the recorder's would, leases wait and get nothing. */
  let completeFails: () => Error = () => new Error('write failed');
  let leaseAnswer: () => Promise<LeasedAttempt[]> = () => Promise.resolve([]);
  const gateway: ExternalGateway = {
    complete: () => Promise.reject(completeFails()),
    lease: () => leaseAnswer(),
    leaveLease: () => undefined,
    leaseUndelivered: () => undefined,
  };
  const fault = (): StoreFault => ({
    kind: 'disk_full',
    target: 'test.db',
    cause: 'no space left on device',
    recoverable: true,
    since: f.clock.now(),
  });

  beforeEach(async () => {
    f = await apiFixture(
      { redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: { leaseMs: 5000 }, jobs: { transport: 'http' } } },
      undefined,
      {},
      gateway,
    );
  });
  afterEach(() => f.close());

  const post = (url: string, payload: unknown) =>
    f.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
  const expect503 = (res: Awaited<ReturnType<typeof post>>) => {
    expect(res.statusCode, res.body).to.equal(503);
    expect(res.json().error).to.deep.include({ code: 'STORE_UNAVAILABLE' });
    expect(Number(res.headers['retry-after'])).to.be.above(0);
  };

  async function runningExternal(): Promise<string> {
    const res = await post('/api/v1/tasks', { task_type: 'send_sms', queue: 'ext' });
    expect(res.statusCode, res.body).to.equal(202);
    const id = res.json().task_id as string;
    expect(await f.store.claimTasks([id], 'external:ext', f.clock.now(), 5000)).to.have.length(1);
    return id;
  }

  it('complete: 503 with Retry-After when the write fails under a fault (it was a 500)', async () => {
    const id = await runningExternal();
    f.store.health.report(fault());
    completeFails = () => new Error('recording the completion failed'); // a plain error, the fault in the store's health
    expect503(await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: 1 }));
    completeFails = () => storeUnavailable(fault()); // the typed error itself
    expect503(await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: 1 }));
  });

  it('complete: a failed write without a fault is still a 500 that asks to report again', async () => {
    const id = await runningExternal();
    completeFails = () => new Error('write failed');
    const res = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: 1 });
    expect(res.statusCode).to.equal(500);
    expect(res.json().error.message).to.match(/report it again/);
  });

  it('lease: 503 with Retry-After during a fault, at the request and after a wait that leased nothing; 200 [] without one', async () => {
    expect((await post('/api/v1/queues/jobs/lease', { worker_id: 'w1' })).json()).to.deep.equal({ tasks: [] });
    f.store.health.report(fault());
    expect503(await post('/api/v1/queues/jobs/lease', { worker_id: 'w1' }));
    f.store.health.recovered();
    // The fault comes while the request waits.
    leaseAnswer = () => {
      f.store.health.report(fault());
      return Promise.resolve([]);
    };
    expect503(await post('/api/v1/queues/jobs/lease', { worker_id: 'w1', wait_s: 1 }));
  });
});
