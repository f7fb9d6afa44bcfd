import { expect } from 'chai';
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

const REDIS_URL = process.env.REDIS_URL;
const CONSUMER_SCRIPT = path.resolve(__dirname, '..', '..', 'examples', 'stream-consumer.js');

/** Polls `check` until it returns true (bounded): waits for a state in Redis or the store, not for time. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * External queues end to end (issue 7): the real scheduler in this process (store, dispatcher,
 * forked workers, HTTP on a free port) with external queues on a real Redis, and the example
 * consumer (`examples/stream-consumer.ts`) as a child process.
 */
describe('external queues through Redis Streams (integration)', function () {
  if (!REDIS_URL) {
    it.skip('needs REDIS_URL (a Redis server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  const run = `test-${process.pid}-${Date.now()}`;
  const streams = { jobs: `${run}:jobs`, crash: `${run}:crash`, manual: `${run}:manual` };
  const s = useInProcessScheduler({
    redisUrl: REDIS_URL,
    externalQueues: {
      jobs: { stream: streams.jobs, maxInFlight: 5 },
      // Long enough that the stalled consumer (a fresh Node process) reads its batch before the
      // leases expire on a loaded machine; the test checks they are still RUNNING then.
      crash: { stream: streams.crash, leaseMs: 4000 },
      manual: { stream: streams.manual, leaseMs: 60_000 },
    },
  });
  let redis: Redis;
  let url = '';
  const consumers: ChildProcess[] = [];

  before(async () => {
    redis = new Redis(REDIS_URL);
    url = await s.scheduler.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    for (const c of consumers) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await redis.del(...Object.values(streams));
    redis.disconnect();
  });

  function startConsumer(stream: string, name: string, env: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, [CONSUMER_SCRIPT], {
      env: { ...process.env, REDIS_URL, SCHEDULER_URL: url, STREAM: stream, CONSUMER: name, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    consumers.push(child);
    return child;
  }

  async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  async function submitMany(queue: string, n: number, extra: Record<string, unknown> = {}): Promise<string[]> {
    const tasks = Array.from({ length: n }, (_, i) => ({ task_type: 'resize_image', queue, payload: { n: i }, ...extra }));
    const ack = await s.scheduler.service.submitBatch({ tasks });
    return ack.tasks.map((t) => t.task_id);
  }

  async function states(ids: string[]): Promise<string[]> {
    return Promise.all(ids.map(async (id) => (await s.scheduler.service.get(id)).status as string));
  }

  async function pendingInGroup(stream: string): Promise<number> {
    const summary = (await redis.xpending(stream, 'scheduler')) as [number, ...unknown[]];
    return Number(summary[0]);
  }

  async function complete(id: string, body: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${url}/api/v1/tasks/${id}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** Reads the next entries of a stream as consumer `tester` (the test plays the consumer). */
  async function read(stream: string): Promise<Array<{ entryId: string; f: Record<string, string> }>> {
    const reply = (await redis.xreadgroup('GROUP', 'scheduler', 'tester', 'COUNT', 10, 'BLOCK', 10_000, 'STREAMS', stream, '>')) as Array<
      [string, Array<[string, string[]]>]
    > | null;
    return (reply ?? []).flatMap(([, entries]) =>
      entries.map(([entryId, list]) => {
        const f: Record<string, string> = {};
        for (let i = 0; i + 1 < list.length; i += 2) f[list[i]] = list[i + 1];
        return { entryId, f };
      }),
    );
  }

  it('maxInFlight bounds the stream; the example consumer completes every task and the entries are deleted', async () => {
    const ids = await submitMany('jobs', 20);
    await until(
      '5 tasks in flight',
      async () => (await states(ids)).filter((st) => st === 'RUNNING').length === 5 && (await redis.xlen(streams.jobs)) === 5,
    );
    expect((await states(ids)).filter((st) => st === 'PENDING')).to.have.length(15);

    const consumer = startConsumer(streams.jobs, 'c-jobs');
    for (const [i, id] of ids.entries()) {
      const t = await s.waitFor(id, (x) => x.status === 'SUCCEEDED');
      expect(t.attempts).to.equal(1);
      expect(t.worker_id).to.equal('external:jobs');
      expect(t.result).to.deep.equal({ echo: { n: i }, task_type: 'resize_image', consumer: 'c-jobs' });
    }
    await until('stream emptied', async () => (await redis.xlen(streams.jobs)) === 0 && (await pendingInGroup(streams.jobs)) === 0);
    await stop(consumer, 'SIGTERM');
  });

  it('a consumer killed mid-batch: after the lease its tasks are retried as new attempts and all succeed; a late report of the old attempt gets 409', async () => {
    const ids = await submitMany('crash', 6, { max_retries: 3, retry_delay_seconds: 0 });
    const stalled = startConsumer(streams.crash, 'c-stalled', { STALL: '1' });
    await until('6 entries read and not acknowledged', async () => (await pendingInGroup(streams.crash)) === 6);
    await stop(stalled, 'SIGKILL');
    expect(await states(ids)).to.deep.equal(Array(6).fill('RUNNING'));

    const consumer = startConsumer(streams.crash, 'c-second');
    for (const id of ids) {
      const t = await s.waitFor(id, (x) => x.status === 'SUCCEEDED');
      expect(t.attempts).to.be.at.least(2);
      expect(t.attempt_history[0]).to.deep.include({ attempt: 1, outcome: 'RETRYING' });
      expect(t.attempt_history[0].error.type).to.equal('worker_lost');
      expect(t.result.consumer).to.equal('c-second');
    }
    const late = await complete(ids[0], { attempt: 1, result: 'late' });
    expect(late.status).to.equal(409);
    expect(late.body.error.code).to.equal('ATTEMPT_CONFLICT');
    expect(late.body.error.details).to.include({ state: 'SUCCEEDED', attempt: 1 });
    expect(((await s.scheduler.service.get(ids[0])) as Record<string, any>).result.consumer).to.equal('c-second');
    await until(
      'dead consumer entries gone',
      async () => (await redis.xlen(streams.crash)) === 0 && (await pendingInGroup(streams.crash)) === 0,
    );
    await stop(consumer, 'SIGTERM');
  });

  it('entry fields; a retryable error retries with a new attempt and entry; a duplicate report is 409; success stores the result', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const ack = await s.scheduler.service.submit(
      {
        task_type: 'charge_card',
        queue: 'manual',
        payload: { amount: 5 },
        idempotency_key: 'charge-1',
        max_retries: 2,
        retry_delay_seconds: 0,
      },
      undefined,
      { traceparent },
    );
    const id = ack.task_id;
    const [first] = await read(streams.manual);
    expect(first.f).to.deep.include({
      task_id: id,
      attempt: '1',
      task_type: 'charge_card',
      payload: '{"amount":5}',
      idempotency_key: 'charge-1',
      traceparent,
    });
    expect(Date.parse(first.f.deadline)).to.be.greaterThan(Date.now() + 30_000); // lease 60 s

    // A message longer than an attempt keeps (4096 characters): cut, the cut marked, as a handler's.
    const long = `card service timed out ${'x'.repeat(9000)}`;
    const failed = await complete(id, { attempt: 1, error: { message: long } });
    expect(failed.status, JSON.stringify(failed.body)).to.equal(200);
    expect(['RETRYING', 'PENDING']).to.include(failed.body.status);
    const dup = await complete(id, { attempt: 1, error: { message: long } });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('ATTEMPT_CONFLICT');

    const [second] = await read(streams.manual);
    expect(second.f).to.include({ task_id: id, attempt: '2' });
    expect(second.entryId).to.not.equal(first.entryId);
    await until(
      "the ended attempt's entry deleted",
      async () => (await redis.xrange(streams.manual, first.entryId, first.entryId)).length === 0,
    );
    const ok = await complete(id, { attempt: 2, result: { charged: true } });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.deep.equal({ task_id: id, attempt: 2, status: 'SUCCEEDED' });
    const t: Record<string, any> = await s.scheduler.service.get(id, { attempts: true });
    expect(t).to.deep.include({ status: 'SUCCEEDED', attempts: 2, result: { charged: true } });
    expect(t.attempt_history[0].error).to.deep.include({
      message: `${long.slice(0, 4096)}… (${long.length - 4096} more characters)`,
      type: 'ExternalError',
      retryable: true,
    });
  });

  it("a consumer's checkpoint reaches the next attempt's entry; progress shows in GET; the old attempt's checkpoint is 409", async () => {
    const { task_id: id } = await s.scheduler.service.submit({
      task_type: 'import_rows',
      queue: 'manual',
      max_retries: 2,
      retry_delay_seconds: 0,
    });
    const [first] = await read(streams.manual);
    expect(first.f).to.include({ task_id: id, attempt: '1' });
    expect(first.f).to.not.have.property('checkpoint');
    const post = async (path: string, body: unknown): Promise<{ status: number; body: any }> => {
      const res = await fetch(`${url}/api/v1/tasks/${id}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const saved = await post('checkpoint', { attempt: 1, value: { next: 1500 } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    expect((await post('progress', { attempt: 1, progress: { done: 1500, total: 4000 } })).status).to.equal(200);
    const mid: Record<string, any> = await s.scheduler.service.get(id);
    expect(mid).to.deep.include({ progress: { done: 1500, total: 4000 }, progress_attempt: 1 });
    expect(mid.checkpoint).to.deep.include({ attempt: 1, value: { next: 1500 } });

    expect((await complete(id, { attempt: 1, error: { message: 'consumer restarted' } })).status).to.equal(200);
    const [second] = await read(streams.manual);
    expect(second.f).to.include({ task_id: id, attempt: '2', checkpoint: '{"next":1500}' });
    const stale = await post('checkpoint', { attempt: 1, value: { next: 9999 } });
    expect(stale.status).to.equal(409);
    expect(stale.body.error).to.deep.include({ code: 'ATTEMPT_CONFLICT' });
    expect((await post('checkpoint', { attempt: 2, value: { next: 4000 } })).status).to.equal(200);
    expect((await complete(id, { attempt: 2, result: { rows: 4000 } })).status).to.equal(200);
    const done: Record<string, any> = await s.scheduler.service.get(id);
    expect(done).to.deep.include({ status: 'SUCCEEDED' });
    expect(done.checkpoint).to.deep.include({ attempt: 2, value: { next: 4000 } });
  });

  it('a permanent error ends the task FAILED without retry, with the code and (bounded) stack the consumer sent', async () => {
    const { task_id: id } = await s.scheduler.service.submit({ task_type: 'charge_card', queue: 'manual', max_retries: 5 });
    const [entry] = await read(streams.manual);
    expect(entry.f.task_id).to.equal(id);
    const stack = ['Declined: card declined', ...Array.from({ length: 40 }, (_, i) => `    at step${i} (charge.js:${i}:1)`)].join('\n');
    const res = await complete(id, {
      attempt: 1,
      error: { message: 'card declined', permanent: true, type: 'Declined', code: 'card_declined', stack },
    });
    expect(res.body).to.deep.equal({ task_id: id, attempt: 1, status: 'FAILED' });
    const t = await s.scheduler.service.get(id);
    expect(t.error).to.deep.include({ message: 'card declined', type: 'Declined', retryable: false, code: 'card_declined' });
    expect(t.error!.stack!.split('\n').slice(0, 30)).to.deep.equal(stack.split('\n').slice(0, 30));
    expect(t.error!.stack, 'cut to the first 30 lines, the cut marked').to.not.include('step35');
  });

  it('cancel of a RUNNING external task ends it CANCELLED at once, deletes its entry, and refuses its completion', async () => {
    const { task_id: id } = await s.scheduler.service.submit({ task_type: 'charge_card', queue: 'manual' });
    const [entry] = await read(streams.manual);
    expect(entry.f.task_id).to.equal(id);
    const cancel = await s.scheduler.service.cancel(id);
    expect(cancel.code).to.equal(202);
    await s.waitFor(id, (x) => x.status === 'CANCELLED');
    const res = await complete(id, { attempt: 1, result: 'done anyway' });
    expect(res.status).to.equal(409);
    expect(res.body.error.details).to.include({ state: 'CANCELLED', attempt: 1 });
    await until('cancelled entry deleted', async () => (await redis.xrange(streams.manual, entry.entryId, entry.entryId)).length === 0);
  });

  it('the actor-message API completes external attempts too (same checks)', async () => {
    const { SchedulerClient } = await import('../../src/client/scheduler-client');
    const client = new SchedulerClient(s.scheduler.apiActor);
    const { task_id: id } = await s.scheduler.service.submit({ task_type: 'charge_card', queue: 'manual' });
    const [entry] = await read(streams.manual);
    expect(entry.f.task_id).to.equal(id);
    const beat = (await client.heartbeat(id, { attempt: 1 })) as { lease_expires_at: string };
    expect(Date.parse(beat.lease_expires_at)).to.be.greaterThan(Date.now());
    try {
      await client.complete(id, { attempt: 2, result: 1 });
      expect.fail('a report on another attempt must be refused');
    } catch (err) {
      expect((err as { code: string }).code).to.equal('ATTEMPT_CONFLICT');
    }
    expect(await client.complete(id, { attempt: 1, result: 1 })).to.deep.equal({ task_id: id, attempt: 1, status: 'SUCCEEDED' });
  });
});
