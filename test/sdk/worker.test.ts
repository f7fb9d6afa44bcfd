import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { createWorker, PermanentError, TaskCancelledError, TaskTimeoutError, Worker, WorkerClosedError } from '../../src/sdk/worker';
import { succeeded } from '../../src/sdk/worker/outcome';
import type { WorkerContext, WorkerLogger, WorkerOptions } from '../../src/sdk/worker';
import { attemptConflict, FakePullServer } from '../helpers/fake-pull-server';

/** A logger that keeps its lines (and never prints). */
function memoryLogger(): WorkerLogger & { lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A promise with its resolve exposed: a handler that waits for the test. */
function gate<T = void>(): { promise: Promise<T>; open(v: T): void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

describe('sdk/worker: createWorker against a fake scheduler', function () {
  this.timeout(20_000);
  let server: FakePullServer;
  let workers: Worker[];
  let logger: ReturnType<typeof memoryLogger>;

  beforeEach(async () => {
    server = new FakePullServer();
    await server.listen();
    workers = [];
    logger = memoryLogger();
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.close({ timeoutMs: 0 })));
    await server.close();
  });

  function worker(options: Partial<WorkerOptions> = {}): Worker {
    const w = createWorker({ url: server.url, queue: 'q', logger, handlers: { work: async (p) => ({ got: p }) }, ...options });
    workers.push(w);
    return w;
  }

  it('leases with its worker id, runs the handler with ctx, and completes each attempt with its result', async () => {
    let seenCtx: WorkerContext | null = null;
    const w = worker({
      workerId: 'w-1',
      handlers: {
        work: async (payload, ctx) => {
          seenCtx = ctx;
          return { doubled: (payload as { n: number }).n * 2 };
        },
      },
    });
    const completed: unknown[] = [];
    w.on('completed', (_task, result) => completed.push(result));
    await w.start();
    const [task] = server.add({ payload: { n: 21 }, idempotency_key: 'k-1', checkpoint: { at: 5 }, traceparent: '00-a-b-01', attempt: 2 });
    const done = await server.waitFor((r) => r.path.endsWith('/complete'));
    expect(done.path).to.equal(`/api/v1/tasks/${task.task_id}/complete`);
    expect(done.body).to.deep.equal({ attempt: 2, result: { doubled: 42 } });
    const lease = server.seen('/lease')[0];
    expect(lease.path).to.equal('/api/v1/queues/q/lease');
    expect(lease.body).to.deep.equal({ worker_id: 'w-1', max: 1, wait_s: 20 });
    expect(seenCtx).to.include({ taskId: task.task_id, attempt: 2, idempotencyKey: 'k-1', traceparent: '00-a-b-01', taskType: 'work' });
    expect(seenCtx!.lastCheckpoint).to.deep.equal({ at: 5 });
    await w.close();
    expect(completed).to.deep.equal([{ doubled: 42 }]);
  });

  it('several URLs (cluster members): a worker whose first member refuses connections leases from and reports to the next', async () => {
    const w = worker({ url: ['http://127.0.0.1:9', server.url] });
    await w.start();
    const [task] = server.add({ payload: { n: 1 } });
    const done = await server.waitFor((r) => r.path.endsWith('/complete'));
    expect(done.path).to.equal(`/api/v1/tasks/${task.task_id}/complete`);
    expect(() => createWorker({ url: [], queue: 'q', handlers: {} })).to.throw(/url: must name at least one/);
    expect(() => createWorker({ url: [server.url, 'ftp://x'], queue: 'q', handlers: {} })).to.throw(/url: must be an http/);
  });

  it('asks for as many tasks as it has free slots and never runs more than `concurrency` at once', async () => {
    const release = gate();
    let running = 0;
    let most = 0;
    const w = worker({
      concurrency: 3,
      handlers: {
        work: async () => {
          most = Math.max(most, ++running);
          await release.promise;
          running--;
        },
      },
    });
    await w.start();
    expect((await server.waitFor((r) => r.path.endsWith('/lease'))).body.max).to.equal(3);
    server.add({}, {});
    const second = await server.waitFor((r) => r.path.endsWith('/lease') && r !== server.seen('/lease')[0]);
    expect(second.body.max).to.equal(1);
    server.add({}, {}, {});
    while (w.running < 3) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    expect(w.running).to.equal(3);
    expect(server.seen('/lease')).to.have.length(2);
    release.open();
    await server.waitForCount('/complete', 5);
    expect(most).to.equal(3);
  });

  it('fails a task without a handler permanently, naming its type; a throw carries its name, permanence, code and stack', async () => {
    worker({
      concurrency: 4,
      handlers: {
        work: async (p) => {
          const kind = (p as { kind: string }).kind;
          if (kind === 'permanent') throw new PermanentError('bad input');
          if (kind === 'flagged') throw Object.assign(new RangeError('out of range'), { permanent: true });
          if (kind === 'bigint') return { n: BigInt(1) };
          if (kind === 'nan') return { ok: true, ratio: [1, Number.NaN] };
          if (kind === 'coded') throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
          if (kind === 'bad-code') throw Object.assign(new Error('odd'), { code: 'E\u0000' });
          if (kind === 'emoji-code') throw Object.assign(new Error('fun'), { code: 'E_\u{1F600}' });
          if (kind === 'throwing-stack') {
            const e = new Error('getter');
            Object.defineProperty(e, 'stack', {
              get() {
                throw new Error('prepareStackTrace broke');
              },
            });
            throw e;
          }
          if (kind === 'proxy')
            throw new Proxy(
              {},
              {
                has: () => {
                  throw new Error('trap');
                },
                getPrototypeOf: () => {
                  throw new Error('trap');
                },
              },
            );
          throw new TypeError('flaky');
        },
      },
    }).start();
    const tasks = server.add(
      { task_type: 'resize' },
      { payload: { kind: 'permanent' } },
      { payload: { kind: 'flagged' } },
      { payload: { kind: 'retry' } },
      { payload: { kind: 'bigint' } },
      { payload: { kind: 'nan' } },
      { payload: { kind: 'coded' } },
      { payload: { kind: 'bad-code' } },
      { payload: { kind: 'emoji-code' } },
      { payload: { kind: 'throwing-stack' } },
      { payload: { kind: 'proxy' } },
    );
    const reports = await server.waitForCount('/complete', 11);
    const errorOf = (i: number) => reports.find((r) => r.path.includes(tasks[i].task_id))!.body.error;
    expect(errorOf(0)).to.deep.equal({
      message: 'no handler for task_type "resize" in this worker',
      type: 'unknown_task_type',
      permanent: true,
    });
    const withoutStack = (e: Record<string, unknown>) => {
      expect(e.stack, 'the stack goes with the report')
        .to.be.a('string')
        .and.match(/^\w*Error: /);
      const { stack: _stack, ...rest } = e;
      return rest;
    };
    expect(withoutStack(errorOf(1))).to.deep.equal({ message: 'bad input', type: 'PermanentError', permanent: true });
    expect(withoutStack(errorOf(2))).to.deep.equal({ message: 'out of range', type: 'RangeError', permanent: true });
    expect(withoutStack(errorOf(3))).to.deep.equal({ message: 'flaky', type: 'TypeError', permanent: false });
    expect(withoutStack(errorOf(6))).to.deep.equal({ message: 'reset', type: 'Error', permanent: false, code: 'ECONNRESET' });
    expect(withoutStack(errorOf(7)), 'a code the scheduler would refuse is left out, not the report').to.not.have.property('code');
    expect(withoutStack(errorOf(8))).to.include({ code: 'E_\u{1F600}' });
    // Reads that throw (a stack getter, a Proxy's traps) neither end the process nor lose the report.
    expect(errorOf(9)).to.deep.equal({ message: 'getter', type: 'Error', permanent: false });
    expect(errorOf(10)).to.include({ type: 'Error', permanent: false });
    expect(errorOf(4)).to.include({ type: 'result_not_serializable', permanent: true });
    // NaN would have been sent, and stored, as null: a success with a result the handler did not give.
    expect(errorOf(5)).to.include({ type: 'result_not_serializable', permanent: true });
    expect(errorOf(5).message).to.include('result.ratio[1]: NaN');
  });

  it('a heartbeat refused with 409 aborts the signal (TaskCancelledError) and reports nothing more', async () => {
    const aborted = gate<unknown>();
    server.override = (r) => (r.path.endsWith('/heartbeat') ? attemptConflict : undefined);
    worker({
      handlers: {
        work: (_p, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              aborted.open(ctx.signal.reason);
              reject(ctx.signal.reason);
            });
            void ctx.heartbeat();
          }),
      },
    }).start();
    server.add({});
    const reason = await aborted.promise;
    expect(reason).to.be.instanceOf(TaskCancelledError);
    await server.waitFor((r) => r.path.endsWith('/lease') && server.seen('/lease').indexOf(r) === 1);
    expect(server.seen('/complete')).to.have.length(0);
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('ATTEMPT_CONFLICT'))).to.equal(true);
  });

  it('a completion refused as stale (409) is logged and dropped; the worker goes on with the next task', async () => {
    let first = true;
    server.override = (r) => {
      if (!r.path.endsWith('/complete') || !first) return undefined;
      first = false;
      return attemptConflict;
    };
    const w = worker();
    const completed: string[] = [];
    w.on('completed', (t) => completed.push(t.task_id));
    await w.start();
    const [a] = server.add({});
    await server.waitForCount('/complete', 1);
    const [b] = server.add({});
    await server.waitForCount('/complete', 2);
    await w.close();
    expect(completed).to.deep.equal([b.task_id]);
    expect(logger.lines.find((l) => l.message.startsWith('completion refused'))?.fields).to.deep.equal({ task_id: a.task_id, attempt: 1 });
  });

  it('a lease answered 503, or no server at all, backs off and polls again instead of stopping', async () => {
    let failures = 2;
    server.override = (r) =>
      r.path.endsWith('/lease') && failures-- > 0
        ? { status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'x' } } }
        : undefined;
    const w = worker();
    const errors: unknown[] = [];
    w.on('error', (e) => errors.push(e));
    await w.start();
    server.add({});
    await server.waitForCount('/complete', 1);
    expect(server.seen('/lease').length).to.be.at.least(3);
    expect(errors).to.have.length.at.least(2);

    const nowhere = createWorker({ url: 'http://127.0.0.1:9', queue: 'q', logger, handlers: { work: async () => null } });
    workers.push(nowhere);
    const failed = gate<unknown>();
    nowhere.on('error', (e) => failed.open(e));
    await nowhere.start();
    expect(((await failed.promise) as Error).name).to.equal('ConnectionError');
    await nowhere.close();
  });

  it("a lease answered 503 with Retry-After waits what it asks (at most 15 s), not the first backoff's 250 ms", async () => {
    let failures = 1;
    server.override = (r) =>
      r.path.endsWith('/lease') && failures-- > 0
        ? { status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'STORE_UNAVAILABLE', message: 'x' } } }
        : undefined;
    const w = worker();
    const failed = gate<unknown>();
    w.on('error', (e) => failed.open(e));
    await w.start();
    await failed.promise;
    expect(logger.lines.map((l) => l.message).find((m) => m.startsWith('lease request failed'))).to.match(/next try in 5000 ms/);
    await w.close();
  });

  it('a lease refused for its request, key or queue (400, 401, 403, 404) is logged as an error naming the fix, and tried again only at the longest pause', async () => {
    for (const [status, code, hint, apiKey] of [
      [400, 'VALIDATION_FAILED', "the scheduler refuses this worker's lease request", undefined],
      [401, 'UNAUTHORIZED', 'the scheduler does not know this apiKey', 'k-1'],
      [401, 'UNAUTHORIZED', 'the scheduler needs an admin apiKey', undefined],
      [403, 'FORBIDDEN', 'use an admin key as apiKey', 'tenant-key'],
      [404, 'NOT_PULL_QUEUE', 'the scheduler has no pull queue of this name', undefined],
    ] as const) {
      const clock = new ManualClock(Date.now());
      let refusals = 1;
      server.override = (r) =>
        r.path.endsWith('/lease') && refusals-- > 0 ? { status, body: { error: { code, message: 'x' } } } : undefined;
      const leasesBefore = server.seen('/lease').length;
      const w = worker({ clock, pollWaitS: 0, ...(apiKey ? { apiKey } : {}) });
      const failed = gate<unknown>();
      w.on('error', (e) => failed.open(e));
      await w.start();
      expect(((await failed.promise) as { status: number }).status).to.equal(status);
      const line = logger.lines.find((l) => l.message.startsWith('lease request failed'))!;
      expect(line.level, String(status)).to.equal('error');
      expect(line.message).to.include(hint);
      const delay = Number(/next try in (\d+) ms/.exec(line.message)![1]);
      expect(delay, 'the longest pause (15 s ± 20 %)').to.be.within(12_000, 18_000);
      expect(server.seen('/lease').length - leasesBefore).to.equal(1);
      clock.advance(delay);
      await server.waitForCount('/lease', leasesBefore + 2);
      await w.close();
      logger.lines.length = 0;
      server.override = () => undefined;
    }
  });

  it('close() abandons the pending long poll at once and waits for running handlers and their reports', async () => {
    const release = gate();
    const started = gate();
    const w = worker({ handlers: { work: async () => (started.open(), await release.promise, 'ok') } });
    await w.start();
    server.add({});
    await started.promise;
    let closed = false;
    const closing = w.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).to.equal(false);
    release.open();
    await closing;
    expect(server.seen('/complete')[0].body).to.deep.equal({ attempt: 1, result: 'ok' });
    const leases = server.seen('/lease').length;
    expect(server.heldPolls).to.equal(0);
    await w.start().then(
      () => expect.fail('start after close'),
      (e: Error) => expect(e.message).to.match(/closed/),
    );
    expect(server.seen('/lease').length).to.equal(leases);
  });

  it('close({timeoutMs}) aborts handlers still running (WorkerClosedError) and reports them failed, retryable', async () => {
    const reasons: unknown[] = [];
    const started = gate();
    const w = worker({
      handlers: {
        work: (_p, ctx) => {
          started.open();
          return new Promise(() => ctx.signal.addEventListener('abort', () => reasons.push(ctx.signal.reason)));
        },
      },
    });
    await w.start();
    server.add({});
    await started.promise;
    await w.close({ timeoutMs: 20 });
    expect(reasons[0]).to.be.instanceOf(WorkerClosedError);
    expect(server.seen('/complete')[0].body.error).to.include({ type: 'WorkerClosedError', permanent: false });
  });

  it('ctx.log lines go to the logs endpoint in a batch before the completion, and to the local logger', async () => {
    worker({
      handlers: {
        work: async (_p, ctx) => {
          ctx.log('plain', { a: 1 });
          ctx.log.warn('careful');
          ctx.log.error('bad', { cyc: BigInt(2) as unknown });
          // From plain JavaScript: fields that are not an object (the scheduler would refuse the whole batch).
          ctx.log('listed', [1, 2] as never);
          ctx.log.info('said', 'text' as never);
          ctx.progress(0.5);
          ctx.progress({ done: 3, total: 4 });
          expect(() => ctx.progress(2)).to.throw(TypeError);
          await ctx.checkpoint({ at: 3 });
          return null;
        },
      },
    }).start();
    const [t] = server.add({});
    await server.waitForCount('/complete', 1);
    const paths = server.requests.filter((r) => r.path.includes(t.task_id)).map((r) => r.path.split('/').pop());
    // The completion comes last; the logs, progress (its last value is sent before the completion)
    // and checkpoint requests before it may interleave.
    expect(paths[paths.length - 1]).to.equal('complete');
    expect(paths.slice(0, -1)).to.have.members(['logs', 'progress', 'checkpoint']);
    expect(server.seen('/progress')[0].body).to.deep.equal({ attempt: 1, progress: { done: 3, total: 4 } });
    const logs = server.seen('/logs')[0].body;
    expect(logs.attempt).to.equal(1);
    expect(logs.lines.map((l: any) => [l.level, l.msg, l.fields])).to.deep.equal([
      ['info', 'plain', { a: 1 }],
      ['warn', 'careful', undefined],
      ['error', 'bad', { fields_dropped: 'not JSON-serialisable' }],
      ['info', 'listed', { fields_dropped: 'not an object (an array)' }],
      ['info', 'said', { fields_dropped: 'not an object (string)' }],
    ]);
    expect(server.seen('/checkpoint')[0].body).to.deep.equal({ attempt: 1, value: { at: 3 } });
    expect(logger.lines.find((l) => l.message === 'plain')?.fields).to.deep.equal({ task_id: t.task_id, attempt: 1, a: 1 });
  });

  it('on a manual clock: heartbeats every interval, and the task timeout aborts the signal and reports a retryable timeout', async () => {
    const clock = new ManualClock(Date.now());
    const reason = gate<unknown>();
    const started = gate();
    worker({
      clock,
      heartbeatIntervalMs: 1000,
      handlers: {
        work: (_p, ctx) => {
          started.open();
          return new Promise(() => ctx.signal.addEventListener('abort', () => reason.open(ctx.signal.reason)));
        },
      },
    }).start();
    server.add({ timeout_ms: 3500 });
    await started.promise;
    for (let i = 1; i <= 3; i++) {
      clock.advance(1000);
      await server.waitForCount('/heartbeat', i);
    }
    clock.advance(500);
    expect(await reason.promise).to.be.instanceOf(TaskTimeoutError);
    const [report] = await server.waitForCount('/complete', 1);
    expect(report.body.error).to.deep.equal({ message: 'timed out after 3500 ms', type: 'timeout', permanent: false });
    expect(server.seen('/heartbeat')).to.have.length(3);
  });

  for (const [lost, first] of [
    // recorded by the scheduler, the answer lost
    ['whose answer was lost', { hangUp: true }],
    // kept during a store fault: the next send (the worker's, or the transport's own retry) finds it written
    [
      'answered 503 (kept by the scheduler during a store fault)',
      { status: 503, body: { error: { code: 'STORE_UNAVAILABLE', message: 'x' } } },
    ],
  ] as const) {
    it(`a success ${lost} is 'completed' when the next send finds it recorded (409: SUCCEEDED by this attempt)`, async () => {
      let sends = 0;
      server.override = (r) => {
        if (!r.path.endsWith('/complete')) return undefined;
        if (++sends === 1) return first;
        const [, , , , id] = r.path.split('/');
        const conflict = {
          state: sends === 2 ? 'SUCCEEDED' : 'RETRYING',
          current_attempt: r.body.attempt,
          task_id: id,
          attempt: r.body.attempt,
        };
        return { status: 409, body: { error: { code: 'ATTEMPT_CONFLICT', message: 'not running', details: conflict } } };
      };
      const w = worker();
      const completed: unknown[] = [];
      w.on('completed', (_t, result) => completed.push(result));
      await w.start();
      server.add({ payload: 1 });
      await server.waitForCount('/complete', 2);
      await w.close();
      expect(completed).to.deep.equal([{ got: 1 }]);
      expect(logger.lines.filter((l) => l.message.startsWith('completion refused'))).to.deep.equal([]);
    });
  }

  it('a completion answered 503 is sent again; a checkpoint refused with 409 rejects and aborts the signal', async () => {
    let unavailable = 1;
    server.override = (r) => {
      if (r.path.endsWith('/complete') && unavailable-- > 0)
        return { status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'x' } } };
      if (r.path.endsWith('/checkpoint')) return attemptConflict;
      return undefined;
    };
    const outcomes: unknown[] = [];
    worker({
      concurrency: 2,
      handlers: {
        work: async () => 'fine',
        saver: async (_p, ctx) => {
          await ctx.checkpoint({ at: 1 }).catch((e: { code?: string }) => outcomes.push(e.code));
          outcomes.push((ctx.signal.reason as Error).name);
          return 'ignored';
        },
      },
    }).start();
    const [fine, , proto] = server.add({}, { task_type: 'saver' }, { task_type: 'constructor' });
    const reports = await server.waitForCount('/complete', 3);
    expect(reports.filter((r) => r.path.includes(fine.task_id)).map((r) => r.body)).to.deep.equal([
      { attempt: 1, result: 'fine' },
      { attempt: 1, result: 'fine' },
    ]);
    expect(outcomes).to.deep.equal(['ATTEMPT_CONFLICT', 'TaskCancelledError']);
    expect(reports.find((r) => r.path.includes(proto.task_id))!.body.error.type).to.equal('unknown_task_type');
    expect(server.seen('/complete')).to.have.length(3);
  });

  it('a handler may declare the type of its payload (compiled as part of this file)', async () => {
    const w = worker({ handlers: { work: async (payload: { n: number }) => payload.n * 2 } });
    const completed: unknown[] = [];
    w.on('completed', (_t, result) => completed.push(result));
    await w.start();
    server.add({ payload: { n: 21 } });
    await server.waitForCount('/complete', 1);
    await w.close();
    expect(completed).to.deep.equal([42]);
  });

  it('a result larger than the completion body limit (413) fails as result_too_large, as one over maxResultBytes does', async () => {
    let sends = 0;
    server.override = (r) =>
      r.path.endsWith('/complete') && ++sends === 1
        ? {
            status: 413,
            body: { error: { code: 'PAYLOAD_TOO_LARGE', message: 'request body exceeds 2162688 bytes', details: { field: 'body' } } },
          }
        : undefined;
    const w = worker();
    await w.start();
    server.add({});
    const reports = await server.waitForCount('/complete', 2);
    await w.close();
    expect(reports[1].body.error).to.include({ type: 'result_too_large', permanent: true });
  });

  it('a result holding an invalid Date fails as result_not_serializable (JSON would store null), naming where', () => {
    const outcome = succeeded({ at: [new Date(0), new Date('x')] });
    expect(outcome.kind).to.equal('failed');
    expect(outcome.kind === 'failed' && outcome.error).to.include({ type: 'result_not_serializable', permanent: true });
    expect(outcome.kind === 'failed' && outcome.error.message).to.include('result.at[1]: an invalid Date');
    expect(succeeded({ at: new Date(0) })).to.deep.equal({ kind: 'succeeded', result: { at: '1970-01-01T00:00:00.000Z' } });
  });

  it('a result with a getter that throws fails as a permanent result_not_serializable, not as a retryable throw', () => {
    const hostile = {
      ok: 1,
      get bad(): never {
        throw new Error('getter refused');
      },
    };
    const outcome = succeeded({ inner: hostile });
    expect(outcome.kind === 'failed' && outcome.error).to.include({ type: 'result_not_serializable', permanent: true });
    expect(outcome.kind === 'failed' && outcome.error.message).to.include('getter refused');
  });

  it('refuses options out of bounds', () => {
    const base = { url: 'http://127.0.0.1:1', queue: 'q', handlers: { x: async () => null } };
    expect(() => createWorker({ ...base, url: 'ftp://x' })).to.throw(TypeError);
    expect(createWorker({ ...base, url: 'HTTP://127.0.0.1:1' }).queue, 'a scheme in capitals, as createClient takes it').to.equal('q');
    expect(() => createWorker({ ...base, queue: '' })).to.throw(TypeError);
    expect(() => createWorker({ ...base, concurrency: 0 })).to.throw(RangeError);
    expect(() => createWorker({ ...base, pollWaitS: 31 })).to.throw(RangeError);
    expect(() => createWorker({ ...base, handlers: { x: 1 as never } })).to.throw(TypeError);
    expect(() => createWorker({ ...base, handlers: {} })).to.throw(TypeError, /at least one task_type/);
    // A logger without warn crashed the worker at its first failed lease, instead of here.
    expect(() => createWorker({ ...base, logger: { info() {}, error() {} } as never })).to.throw(
      TypeError,
      /logger\.warn must be a function/,
    );
    expect(() => createWorker({ ...base, logger: {} as never })).to.throw(TypeError, /logger\.info/);
    expect(() => createWorker({ ...base, logger: { info() {}, warn() {}, error() {}, debug: 1 } as never })).to.throw(
      TypeError,
      /logger\.debug/,
    );
    expect(createWorker({ ...base, logger: { info() {}, warn() {}, error() {} } }).queue).to.equal('q');
    expect(new PermanentError('x')).to.include({ name: 'PermanentError', permanent: true });
  });
});
