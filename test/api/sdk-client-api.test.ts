import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { BadRequestError, ConflictError, createClient, NotFoundError, SchedulerClient, WaitTimeoutError } from '../../src/sdk/client';
import { moveClockWhileWaiting } from '../helpers/clock-while-waiting';

/**
 * The typed client against a real listening app (SQLite store, manual clock, no actors: tasks are
 * moved on through the store where a run is needed).
 */
describe('SDK client against a listening app', function () {
  this.timeout(30_000);
  let f: ApiFixture;
  let client: SchedulerClient;
  before(async () => {
    // redisUrl is required with external queues; nothing connects to it in this fixture.
    f = await apiFixture({ redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: { leaseMs: 5000 } } });
    const url = await f.app.listen({ port: 0, host: '127.0.0.1' });
    client = createClient({ url, retry: { maxAttempts: 1 } });
  });
  after(() => f.close());

  /** Claims a stored task as the dispatcher does: RUNNING, attempt 1. */
  async function claim(id: string, worker = 'external:ext'): Promise<void> {
    expect(await f.store.claimTasks([id], worker, f.clock.now(), 5000)).to.have.length(1);
  }

  it('submits, reads, lists, changes and cancels tasks', async () => {
    const ack = await client.tasks.submit({ task_type: 'echo', payload: { n: 1 }, idempotency_key: 'sdk-1' });
    expect(ack.status).to.equal('PENDING');
    expect((await client.tasks.submit({ task_type: 'echo', payload: { n: 1 }, idempotency_key: 'sdk-1' })).idempotent_replayed).to.equal(
      true,
    );
    const batch = await client.tasks.batch([{ task_type: 'echo' }, { task_type: 'noop', priority: 'high' }]);
    expect(batch).to.have.length(2);
    const task = await client.tasks.get(ack.task_id);
    expect(task).to.include({ task_id: ack.task_id, task_type: 'echo', status: 'PENDING' });
    expect(task.payload).to.deep.equal({ n: 1 });
    expect((await client.tasks.list({ task_type: 'noop', limit: 10 })).tasks.map((t) => t.task_id)).to.deep.equal([batch[1].task_id]);
    const all: string[] = [];
    for await (const t of client.tasks.iterate({ limit: 1 })) all.push(t.task_id);
    expect(all).to.have.members([ack.task_id, ...batch.map((b) => b.task_id)]);
    expect((await client.tasks.patch(ack.task_id, { priority: 'low' })).priority).to.equal('low');
    const later = new Date(f.clock.now() + 3_600_000);
    expect((await client.tasks.reschedule(ack.task_id, later)).scheduled_at).to.equal(later.toISOString());
    expect(await client.tasks.attempts(ack.task_id)).to.deep.equal([]);
    const cancelled = await client.tasks.cancel(ack.task_id);
    expect(cancelled).to.include({ task_id: ack.task_id, status: 'CANCELLED', cancel_requested: false });
    // Terminal already: the long poll answers at once.
    expect((await client.tasks.wait(ack.task_id, { timeoutMs: 5000 })).status).to.equal('CANCELLED');
    const conflict = await client.tasks.cancel(ack.task_id).catch((e: unknown) => e);
    expect(conflict).to.be.instanceOf(ConflictError).and.include({ code: 'TASK_STATE_CONFLICT' });
    const bad = await client.tasks.submit({ task_type: 'echo', scheduled_at: '2030-02-30T09:00:00Z' }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(BadRequestError).and.include({ code: 'VALIDATION_FAILED', field: 'scheduled_at' });
    expect(await client.tasks.get('nope').catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
    // The server's long polls time out on its manual clock: move it on while the client waits.
    const timeout = await moveClockWhileWaiting(
      f,
      client.tasks.wait(batch[0].task_id, { timeoutMs: 300, pollIntervalMs: 100 }).catch((e: unknown) => e),
    );
    expect(timeout).to.be.instanceOf(WaitTimeoutError);
    expect((timeout as WaitTimeoutError<{ status: string }>).last.status).to.equal('PENDING');
  });

  it('creates, reads, changes, pauses, lists and deletes cron tasks, with runs and preview', async () => {
    const cron = await client.crons.create({ name: 'nightly', cron_expression: '30 2 * * *', task_type: 'echo' }, { preview: 2 });
    expect(cron).to.include({ name: 'nightly', enabled: true });
    expect((await client.crons.get(cron.cron_id)).cron_expression).to.equal('30 2 * * *');
    expect((await client.crons.patch(cron.cron_id, { cron_expression: '0 3 * * *' })).cron_expression).to.equal('0 3 * * *');
    expect((await client.crons.pause(cron.cron_id)).enabled).to.equal(false);
    expect((await client.crons.resume(cron.cron_id)).enabled).to.equal(true);
    expect((await client.crons.list({ enabled: true })).cron_tasks.map((c) => c.cron_id)).to.include(cron.cron_id);
    expect(await client.crons.runs(cron.cron_id)).to.deep.equal({ runs: [], next_cursor: null });
    const preview = await client.crons.preview({ cron_expression: '0 0 1 1 *', from: '2026-01-02T00:00:00Z', count: 1 });
    expect(preview.fire_times).to.deep.equal(['2027-01-01T00:00:00.000Z']);
    expect(await client.crons.delete(cron.cron_id)).to.deep.equal({ cron_id: cron.cron_id, deleted: true });
  });

  it('submits, reads, lists and cancels workflows', async () => {
    const ack = await client.workflows.submit({
      workflow_name: 'pipeline',
      tasks: [
        { task_id: 'a', task_type: 'echo' },
        { task_id: 'b', task_type: 'echo', dependencies: ['a'] },
      ],
    });
    expect(ack.tasks).to.deep.equal({ a: 'PENDING', b: 'BLOCKED' });
    expect((await client.workflows.get(ack.workflow_id)).task_details?.map((t) => t.workflow_task_id)).to.deep.equal(['a', 'b']);
    expect((await client.workflows.list({ status: 'RUNNING' })).workflows.map((w) => w.workflow_id)).to.include(ack.workflow_id);
    expect((await client.workflows.cancel(ack.workflow_id)).status).to.equal('CANCELLED');
    expect((await client.workflows.wait(ack.workflow_id, { timeoutMs: 5000 })).status).to.equal('CANCELLED');
  });

  it('lists, replays and deletes dead letters', async () => {
    const dead: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { task_id } = await client.tasks.submit({ task_type: 'fail', max_retries: 0 });
      await claim(task_id, 'worker-1');
      await f.store.completeAttempts(
        [
          {
            taskId: task_id,
            attempt: 1,
            state: 'DEAD',
            retryAt: null,
            result: null,
            durationMs: 1,
            error: { message: 'boom', type: 'Error', retryable: true },
          },
        ],
        f.clock.now(),
      );
      dead.push(task_id);
    }
    expect((await client.deadLetters.list()).tasks.map((t) => t.task_id)).to.have.members(dead);
    expect(await client.deadLetters.replay(dead[0])).to.deep.equal({ task_id: dead[0], status: 'PENDING' });
    expect(await client.deadLetters.delete(dead[1])).to.deep.equal({ task_id: dead[1], deleted: true });
    expect((await client.deadLetters.list()).tasks).to.deep.equal([]);
  });

  it('sets and removes tenants, rate limits and concurrency limits; runs an audit; reads the probes', async () => {
    expect(await client.tenants.put('acme', { weight: 3, rate_limit: { rate_per_second: 5 } })).to.deep.include({
      tenant_id: 'acme',
      weight: 3,
    });
    expect((await client.tenants.list()).map((t) => t.tenant_id)).to.include('acme');
    expect(await client.tenants.delete('acme')).to.include({ tenant_id: 'acme', deleted: true });
    expect(await client.rateLimits.put('echo', { rate_per_second: 2, burst: 4 })).to.deep.equal({
      task_type: 'echo',
      rate_per_second: 2,
      burst: 4,
    });
    expect(await client.rateLimits.list()).to.deep.equal([{ task_type: 'echo', rate_per_second: 2, burst: 4 }]);
    expect(await client.rateLimits.delete('echo')).to.deep.equal({ task_type: 'echo', deleted: true, rate_limit: null });
    expect(await client.concurrencyLimits.put('k1', { max_running: 2 })).to.include({ key: 'k1', max_running: 2 });
    expect((await client.concurrencyLimits.get('k1')).max_running).to.equal(2);
    expect((await client.concurrencyLimits.list()).map((l) => l.key)).to.deep.equal(['k1']);
    expect(await client.concurrencyLimits.delete('k1')).to.deep.equal({ key: 'k1', deleted: true });
    // Keys `.` and `..` are path segments URL parsing would remove: sent escaped, they reach their route.
    for (const key of ['.', '..']) {
      expect(await client.concurrencyLimits.put(key, { max_running: 3 })).to.include({ key, max_running: 3 });
      expect((await client.concurrencyLimits.get(key)).max_running).to.equal(3);
      expect(await client.concurrencyLimits.delete(key)).to.deep.equal({ key, deleted: true });
    }
    expect(await client.audit()).to.have.property('checked_at');
    expect(await client.health.live()).to.deep.equal({ status: 'ok' });
    expect((await client.health.ready()).status).to.equal('ready');
    expect(await client.health.metrics()).to.match(/^# HELP/m);
  });

  it("reports on an external task's attempt; a stale attempt's report is refused", async () => {
    const { task_id } = await client.tasks.submit({ task_type: 'send_sms', queue: 'ext', payload: { to: '+1' } });
    await claim(task_id);
    expect(await client.reports.heartbeat(task_id, { attempt: 1 })).to.include({ task_id, attempt: 1 });
    expect(await client.reports.progress(task_id, { attempt: 1, progress: { done: 1, total: 2 } })).to.include({ attempt: 1 });
    expect(await client.reports.checkpoint(task_id, { attempt: 1, value: { page: 3 } })).to.include({ attempt: 1 });
    const stale = await client.reports.complete(task_id, { attempt: 2, result: 'x' }).catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(ConflictError).and.include({ code: 'ATTEMPT_CONFLICT' });
    // The completion of the current attempt goes through the dispatcher, which this fixture does not run (503, retried by default).
  });
});
