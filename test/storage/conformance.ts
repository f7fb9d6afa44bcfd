/**
 * The storage conformance suite (DESIGN §13): every Store adapter runs this same suite, like
 * Agenda's shared repository tests or pg-boss running its suite on several databases. It checks
 * the contract of src/storage/store.ts only — never an adapter's internals — and passes `now`
 * explicitly everywhere (fixed epoch numbers).
 *
 * Usage, from an adapter's test file:
 *   describeStoreConformance('sqlite', { create: async () => new SqliteStore(file), destroy: … });
 */
import { expect } from 'chai';
import { ValidationError } from '../../src/domain/errors';
import { NewTask, TASK_STATES, TaskRecord, TaskState } from '../../src/domain/task';
import { Store, StoreConfigError } from '../../src/storage/store';
import {
  completion,
  finishedTask,
  idOutsidePartition,
  idsInPartition,
  newTask,
  PARTITIONS,
  rejectionOf,
  startTask,
  T0,
  taskError,
} from './fixtures';

export interface StoreFactory {
  /** A new, not yet opened store on fresh, empty storage. */
  create(): Promise<Store>;
  /** Releases everything `create` made (files, databases). Called after the store was closed. */
  destroy(store: Store): Promise<void>;
}

/** The record getTask must return right after inserting `t`. */
function freshRecord(t: NewTask): Omit<TaskRecord, 'seq'> {
  return {
    ...t,
    attempts: 0,
    workerId: null,
    startedAt: null,
    completedAt: null,
    durationMs: null,
    result: null,
    error: null,
    cancelRequested: false,
    updatedAt: t.createdAt,
  };
}

function withoutSeq(r: TaskRecord | null): Omit<TaskRecord, 'seq'> | null {
  if (r === null) return null;
  const { seq, ...rest } = r;
  expect(seq, 'seq').to.be.a('number');
  return rest;
}

export function describeStoreConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = undefined as unknown as Store;
      const s = await factory.create();
      try {
        await s.open(PARTITIONS);
      } catch (err) {
        await factory.destroy(s);
        throw err;
      }
      store = s;
    });

    afterEach(async () => {
      if (!store) return;
      try {
        await store.close();
      } finally {
        await factory.destroy(store);
      }
    });

    async function stateOf(id: string): Promise<TaskState | undefined> {
      return (await store.getTask(id))?.state;
    }

    // ------------------------------------------------------------------------------------------
    describe('insertTasks / getTask', () => {
      it('round-trips every field of a fully populated SCHEDULED task', async () => {
        const t = newTask('rt-full', {
          taskType: 'send_email',
          payload: {
            to: 'zoë@example.com',
            subject: 'Grüße — 你好 — مرحبا — 🚀👩‍💻',
            nested: { list: [1, 2.5, -3, true, false, null, 'x', { deep: { deeper: ['ü'] } }], empty: {}, arr: [] },
            quote: 'he said "hi" \\ back\nslash\ttab\u0000nul',
            big: 9_007_199_254_740_991,
          },
          priority: 'high',
          queue: 'emails',
          tenantId: 'tenant-ü',
          correlationId: 'corr-42',
          idempotencyKey: 'idem-42',
          metadata: { tenant_id: 'tenant-ü', correlation_id: 'corr-42', traceparent: '00-abc-def-01', tags: ['a', 'b'] },
          retry: { maxRetries: 7, backoff: 'linear', delaySeconds: 2.5 },
          timeoutSeconds: 12.5,
          scheduledAt: T0 + 60_000,
          createdAt: T0,
        });
        expect(t.state).to.equal('SCHEDULED');
        await store.insertTasks([t]);
        expect(withoutSeq(await store.getTask('rt-full'))).to.deep.equal(freshRecord(t));
      });

      it('round-trips a PENDING task with null payload, null scheduledAt and empty metadata', async () => {
        const t = newTask('rt-null', {
          payload: null,
          scheduledAt: null,
          metadata: {},
          priority: 'low',
          retry: { maxRetries: 0, backoff: 'fixed', delaySeconds: 0 },
          createdAt: T0 + 5,
        });
        expect(t.state).to.equal('PENDING');
        expect(t.dueAt).to.equal(T0 + 5);
        await store.insertTasks([t]);
        const got = await store.getTask('rt-null');
        expect(got).to.not.equal(null);
        expect(got!.payload).to.equal(null);
        expect(got!.scheduledAt).to.equal(null);
        expect(withoutSeq(got)).to.deep.equal(freshRecord(t));
      });

      it('round-trips payloads of every JSON type in one insert', async () => {
        const payloads: unknown[] = [
          'plain string',
          '',
          0,
          -12.75,
          true,
          false,
          [],
          [1, [2, [3, [4]]]],
          { '': 'empty key', 'ключ': 'значение', '🔑': '🔒', 'a.b': { '$dollar': 1 } },
          'e\u0301 (combining) ﷺ 𝄞 \u2028\u2029',
        ];
        const tasks = payloads.map((payload, i) => newTask(`rt-json-${i}`, { payload }));
        await store.insertTasks(tasks);
        for (const t of tasks) {
          const got = await store.getTask(t.id);
          expect(got?.payload, t.id).to.deep.equal(t.payload);
        }
      });

      it('gives each task its own seq, increasing in insertion order', async () => {
        await store.insertTasks([newTask('seq-a'), newTask('seq-b')]);
        await store.insertTasks([newTask('seq-c')]);
        const seqs = await Promise.all(['seq-a', 'seq-b', 'seq-c'].map(async (id) => (await store.getTask(id))!.seq));
        expect(seqs[0]).to.be.below(seqs[1]);
        expect(seqs[1]).to.be.below(seqs[2]);
      });

      it('returns null for an unknown id and no attempts for a fresh task', async () => {
        expect(await store.getTask('nope')).to.equal(null);
        await store.insertTasks([newTask('fresh')]);
        expect(await store.getAttempts('fresh')).to.deep.equal([]);
        expect(await store.getAttempts('nope')).to.deep.equal([]);
      });

      it('accepts an empty list', async () => {
        await store.insertTasks([]);
        expect((await store.listTasks({ limit: 10 })).tasks).to.have.length(0);
      });

      it('rejects a list containing a duplicate id and stores none of it (atomic)', async () => {
        const list = [newTask('dup-1'), newTask('dup-2'), newTask('dup-1', { payload: 'second' }), newTask('dup-3')];
        const err = await rejectionOf(() => store.insertTasks(list));
        expect(err).to.be.instanceOf(Error);
        for (const id of ['dup-1', 'dup-2', 'dup-3']) expect(await store.getTask(id), id).to.equal(null);
        const counts = await store.countByState();
        expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
      });

      it('rejects a list that repeats an already stored id, keeps the stored task and stores none of the list', async () => {
        const original = newTask('exists', { payload: 'original' });
        await store.insertTasks([original]);
        const err = await rejectionOf(() =>
          store.insertTasks([newTask('new-1'), newTask('exists', { payload: 'replacement' }), newTask('new-2')]),
        );
        expect(err).to.be.instanceOf(Error);
        expect(await store.getTask('new-1')).to.equal(null);
        expect(await store.getTask('new-2')).to.equal(null);
        expect(withoutSeq(await store.getTask('exists'))).to.deep.equal(freshRecord(original));
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('loadDue', () => {
      const P = 3;

      it('returns only waiting tasks of the partition due by `until`, in (dueAt, seq) order', async () => {
        const [a, b, c, d, run, ok, failed, dead, cancelled, retrying] = idsInPartition(P, 10, 'due');
        const elsewhere = idOutsidePartition(P);
        await store.insertTasks([newTask(a, { createdAt: T0, dueAt: T0 + 100 })]);
        await store.insertTasks([newTask(b, { createdAt: T0, scheduledAt: T0 + 50 })]); // SCHEDULED
        await store.insertTasks([newTask(c, { createdAt: T0, dueAt: T0 + 100 })]); // same dueAt as a, later seq
        await store.insertTasks([newTask(d, { createdAt: T0, scheduledAt: T0 + 301 })]); // after until
        await store.insertTasks([newTask(elsewhere, { createdAt: T0 })]); // other partition
        await store.insertTasks([newTask(run, { createdAt: T0 })]);
        await startTask(store, run, T0);
        await finishedTask(store, ok, 'SUCCEEDED', T0);
        await finishedTask(store, failed, 'FAILED', T0);
        await finishedTask(store, dead, 'DEAD', T0);
        await store.insertTasks([newTask(cancelled, { createdAt: T0 })]);
        await store.cancelTask(cancelled, T0);
        await store.insertTasks([newTask(retrying, { createdAt: T0 })]);
        const attempt = await startTask(store, retrying, T0);
        await store.completeAttempts([completion(retrying, attempt, 'RETRYING', { retryAt: T0 + 200, error: taskError('boom') })], T0 + 1);

        const due = await store.loadDue(P, T0 + 300, 100);
        expect(due.map((e) => e.id)).to.deep.equal([b, a, c, retrying]);
        expect(due.map((e) => e.state)).to.deep.equal(['SCHEDULED', 'PENDING', 'PENDING', 'RETRYING']);
        for (let i = 1; i < due.length; i++) {
          const [p, q] = [due[i - 1], due[i]];
          expect(p.dueAt < q.dueAt || (p.dueAt === q.dueAt && p.seq < q.seq), `order at ${i}`).to.equal(true);
        }
        expect(await store.loadDue(P, T0 + 1_000_000, 100)).to.have.length(5); // + d
      });

      it('treats `until` as inclusive and returns complete DueEntry fields', async () => {
        const [x] = idsInPartition(P, 1, 'incl');
        const t = newTask(x, { scheduledAt: T0 + 1000, priority: 'high', tenantId: 'tenant-z', taskType: 'sleep' });
        await store.insertTasks([t]);
        expect(await store.loadDue(P, T0 + 999, 10)).to.deep.equal([]);
        const due = await store.loadDue(P, T0 + 1000, 10);
        expect(due).to.have.length(1);
        const { seq, ...rest } = due[0];
        expect(seq).to.equal((await store.getTask(x))!.seq);
        expect(rest).to.deep.equal({
          id: x,
          partition: P,
          dueAt: T0 + 1000,
          priority: 'high',
          tenantId: 'tenant-z',
          taskType: 'sleep',
          state: 'SCHEDULED',
        });
      });

      it('respects the limit, taking the earliest first', async () => {
        const ids = idsInPartition(P, 6, 'lim');
        // Inserted in reverse due order: dueAt T0+60, T0+50, …, T0+10.
        for (let i = 0; i < ids.length; i++) {
          await store.insertTasks([newTask(ids[i], { createdAt: T0, dueAt: T0 + (ids.length - i) * 10 })]);
        }
        const due = await store.loadDue(P, T0 + 1000, 3);
        expect(due.map((e) => e.id)).to.deep.equal([ids[5], ids[4], ids[3]]);
        expect(await store.loadDue(P, T0 + 1000, 1)).to.have.length(1);
      });

      it('returns nothing for a partition without due tasks', async () => {
        const [x] = idsInPartition(P, 1, 'solo');
        await store.insertTasks([newTask(x)]);
        expect(await store.loadDue((P + 1) % PARTITIONS, T0 + 1_000_000, 100)).to.deep.equal([]);
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('markPending', () => {
      it('moves SCHEDULED to PENDING only once due_at <= now', async () => {
        await store.insertTasks([newTask('mp-s', { scheduledAt: T0 + 1000 })]);
        expect(await store.markPending(['mp-s'], T0 + 999)).to.deep.equal([]);
        expect(await stateOf('mp-s')).to.equal('SCHEDULED');
        expect(await store.markPending(['mp-s'], T0 + 1000)).to.deep.equal(['mp-s']);
        const t = await store.getTask('mp-s');
        expect(t!.state).to.equal('PENDING');
        expect(t!.updatedAt).to.equal(T0 + 1000);
      });

      it('returns already-PENDING ids, and not unknown, cancelled, running or terminal ones', async () => {
        await store.insertTasks([
          newTask('mp-pending'),
          newTask('mp-due', { createdAt: T0 - 100, scheduledAt: T0 - 10, state: 'SCHEDULED' }),
          newTask('mp-later', { scheduledAt: T0 + 5000 }),
          newTask('mp-cancelled', { scheduledAt: T0 + 10 }),
          newTask('mp-running'),
        ]);
        await store.cancelTask('mp-cancelled', T0);
        await startTask(store, 'mp-running', T0);
        await finishedTask(store, 'mp-done', 'SUCCEEDED', T0);

        const ids = ['mp-pending', 'mp-due', 'mp-later', 'mp-cancelled', 'mp-running', 'mp-done', 'mp-unknown'];
        const got = await store.markPending(ids, T0 + 100);
        expect(got).to.have.members(['mp-pending', 'mp-due']);
        expect(got).to.have.length(2);
        expect(await stateOf('mp-cancelled')).to.equal('CANCELLED');
        expect(await stateOf('mp-running')).to.equal('RUNNING');
        expect(await stateOf('mp-done')).to.equal('SUCCEEDED');
        expect(await stateOf('mp-later')).to.equal('SCHEDULED');
      });

      it('moves a RETRYING task to PENDING once its retry time has come', async () => {
        await store.insertTasks([newTask('mp-r')]);
        const attempt = await startTask(store, 'mp-r', T0);
        await store.completeAttempts([completion('mp-r', attempt, 'RETRYING', { retryAt: T0 + 500 })], T0 + 10);
        expect(await store.markPending(['mp-r'], T0 + 499)).to.deep.equal([]);
        expect(await stateOf('mp-r')).to.equal('RETRYING');
        expect(await store.markPending(['mp-r'], T0 + 500)).to.deep.equal(['mp-r']);
        expect(await stateOf('mp-r')).to.equal('PENDING');
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('claimTasks', () => {
      it('moves PENDING to RUNNING, starts attempt 1 and records worker and start time', async () => {
        await store.insertTasks([newTask('cl-1')]);
        const claimed = await store.claimTasks(['cl-1'], 'worker-7', T0 + 20, 30_000);
        expect(claimed).to.have.length(1);
        expect(claimed[0].attempt).to.equal(1);
        const t = await store.getTask('cl-1');
        expect(t!.state).to.equal('RUNNING');
        expect(t!.attempts).to.equal(1);
        expect(t!.workerId).to.equal('worker-7');
        expect(t!.startedAt).to.equal(T0 + 20);
        expect(t!.updatedAt).to.equal(T0 + 20);
        expect(t!.cancelRequested).to.equal(false);
      });

      it('returns every field a worker needs', async () => {
        const t = newTask('cl-fields', {
          taskType: 'http',
          payload: { url: 'https://example.com/hook', body: { ä: ['ß', 1] } },
          idempotencyKey: 'idem-cl',
          tenantId: 'tenant-q',
          timeoutSeconds: 45,
          retry: { maxRetries: 5, backoff: 'fixed', delaySeconds: 3 },
          createdAt: T0,
          dueAt: T0 + 7,
        });
        await store.insertTasks([t]);
        const [c] = await store.claimTasks(['cl-fields'], 'w', T0 + 9, 10_000);
        expect(c).to.deep.equal({
          id: 'cl-fields',
          attempt: 1,
          taskType: 'http',
          payload: { url: 'https://example.com/hook', body: { ä: ['ß', 1] } },
          timeoutSeconds: 45,
          idempotencyKey: 'idem-cl',
          dueAt: T0 + 7,
          retry: { maxRetries: 5, backoff: 'fixed', delaySeconds: 3 },
          partition: t.partition,
          tenantId: 'tenant-q',
          startedAt: T0 + 9,
        });
      });

      it('lets only the first of two claims of the same id win (compare-and-set)', async () => {
        await store.insertTasks([newTask('cl-cas')]);
        expect(await store.claimTasks(['cl-cas'], 'w1', T0 + 1, 1000)).to.have.length(1);
        expect(await store.claimTasks(['cl-cas'], 'w2', T0 + 2, 1000)).to.deep.equal([]);
        const t = await store.getTask('cl-cas');
        expect(t!.attempts).to.equal(1);
        expect(t!.workerId).to.equal('w1');
        expect(t!.startedAt).to.equal(T0 + 1);
      });

      it('hands an attempt out once when two claims race', async () => {
        await store.insertTasks([newTask('cl-race')]);
        const [r1, r2] = await Promise.all([
          store.claimTasks(['cl-race'], 'w1', T0 + 1, 1000),
          store.claimTasks(['cl-race'], 'w2', T0 + 1, 1000),
        ]);
        expect(r1.length + r2.length).to.equal(1);
        expect((await store.getTask('cl-race'))!.attempts).to.equal(1);
      });

      it('claims a repeated id in one call once', async () => {
        await store.insertTasks([newTask('cl-twice')]);
        const claimed = await store.claimTasks(['cl-twice', 'cl-twice'], 'w', T0, 1000);
        expect(claimed.map((c) => c.id)).to.deep.equal(['cl-twice']);
      });

      it('does not claim SCHEDULED, RETRYING, CANCELLED, terminal or unknown tasks', async () => {
        await store.insertTasks([
          newTask('cl-sched', { scheduledAt: T0 + 10_000 }),
          newTask('cl-cancel'),
          newTask('cl-retry'),
          newTask('cl-ok'),
        ]);
        await store.cancelTask('cl-cancel', T0);
        const attempt = await startTask(store, 'cl-retry', T0);
        await store.completeAttempts([completion('cl-retry', attempt, 'RETRYING', { retryAt: T0 + 5 })], T0 + 1);
        await finishedTask(store, 'cl-done', 'SUCCEEDED', T0);

        const claimed = await store.claimTasks(
          ['cl-sched', 'cl-cancel', 'cl-retry', 'cl-done', 'cl-unknown', 'cl-ok'],
          'w',
          T0 + 100,
          1000,
        );
        expect(claimed.map((c) => c.id)).to.deep.equal(['cl-ok']);
        expect(await stateOf('cl-sched')).to.equal('SCHEDULED');
        expect(await stateOf('cl-cancel')).to.equal('CANCELLED');
        expect(await stateOf('cl-retry')).to.equal('RETRYING');
        expect(await stateOf('cl-done')).to.equal('SUCCEEDED');
        expect((await store.getTask('cl-retry'))!.attempts).to.equal(1);
      });

      it('numbers attempts across retries', async () => {
        await store.insertTasks([newTask('cl-n')]);
        expect(await startTask(store, 'cl-n', T0)).to.equal(1);
        await store.completeAttempts([completion('cl-n', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);
        expect(await startTask(store, 'cl-n', T0 + 10, 'worker-2')).to.equal(2);
        const t = await store.getTask('cl-n');
        expect(t!.attempts).to.equal(2);
        expect(t!.workerId).to.equal('worker-2');
        expect(t!.startedAt).to.equal(T0 + 10);
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('completeAttempts', () => {
      it('SUCCEEDED stores result, durationMs and completedAt', async () => {
        await store.insertTasks([newTask('ca-ok', { taskType: 'echo' })]);
        const attempt = await startTask(store, 'ca-ok', T0);
        const result = { echoed: { text: 'héllo 🌍', list: [1, null] } };
        const [r] = await store.completeAttempts(
          [completion('ca-ok', attempt, 'SUCCEEDED', { result, durationMs: 123 })],
          T0 + 200,
        );
        expect(r.taskId).to.equal('ca-ok');
        expect(r.applied).to.equal(true);
        expect(r.state).to.equal('SUCCEEDED');
        expect(r.taskType).to.equal('echo');
        const t = await store.getTask('ca-ok');
        expect(t!.state).to.equal('SUCCEEDED');
        expect(t!.result).to.deep.equal(result);
        expect(t!.durationMs).to.equal(123);
        expect(t!.completedAt).to.equal(T0 + 200);
        expect(t!.updatedAt).to.equal(T0 + 200);
        expect(t!.error).to.equal(null);
        expect(t!.attempts).to.equal(1);
      });

      it('ignores a duplicate completion of the same attempt (applied: false, state unchanged)', async () => {
        await store.insertTasks([newTask('ca-dup')]);
        const attempt = await startTask(store, 'ca-dup', T0);
        await store.completeAttempts([completion('ca-dup', attempt, 'SUCCEEDED', { result: 'first', durationMs: 10 })], T0 + 10);
        const before = await store.getTask('ca-dup');

        const [again] = await store.completeAttempts([completion('ca-dup', attempt, 'SUCCEEDED', { result: 'second' })], T0 + 20);
        expect(again.applied).to.equal(false);
        expect(again.state).to.equal('SUCCEEDED');
        const [asFailure] = await store.completeAttempts(
          [completion('ca-dup', attempt, 'FAILED', { error: taskError('late', 'Error', false) })],
          T0 + 30,
        );
        expect(asFailure.applied).to.equal(false);
        expect(asFailure.state).to.equal('SUCCEEDED');

        expect(await store.getTask('ca-dup')).to.deep.equal(before);
        expect(await store.getAttempts('ca-dup')).to.have.length(1);
      });

      it('ignores a stale attempt number', async () => {
        await store.insertTasks([newTask('ca-stale')]);
        await startTask(store, 'ca-stale', T0);
        const [future] = await store.completeAttempts([completion('ca-stale', 2, 'SUCCEEDED')], T0 + 1);
        expect(future.applied).to.equal(false);
        expect(future.state).to.equal('RUNNING');
        await store.completeAttempts([completion('ca-stale', 1, 'RETRYING', { retryAt: T0 + 5 })], T0 + 2);
        await startTask(store, 'ca-stale', T0 + 5);
        const [late] = await store.completeAttempts([completion('ca-stale', 1, 'SUCCEEDED', { result: 'late' })], T0 + 6);
        expect(late.applied).to.equal(false);
        expect(late.state).to.equal('RUNNING');
        const t = await store.getTask('ca-stale');
        expect(t!.state).to.equal('RUNNING');
        expect(t!.attempts).to.equal(2);
        expect(t!.result).to.equal(null);
      });

      it('reports applied: false with state null for an unknown task', async () => {
        const [r] = await store.completeAttempts([completion('ca-ghost', 1, 'SUCCEEDED')], T0);
        expect(r.taskId).to.equal('ca-ghost');
        expect(r.applied).to.equal(false);
        expect(r.state).to.equal(null);
        expect(r.entry).to.equal(null);
      });

      it('RETRYING sets dueAt = retryAt, returns a due entry and makes the task due again', async () => {
        const [id] = idsInPartition(5, 1, 'ca-retry');
        await store.insertTasks([newTask(id, { priority: 'low', tenantId: 'tenant-r', taskType: 'fail' })]);
        const attempt = await startTask(store, id, T0);
        const err = taskError('connection reset', 'ECONNRESET');
        const [r] = await store.completeAttempts(
          [completion(id, attempt, 'RETRYING', { retryAt: T0 + 2000, error: err, durationMs: 40 })],
          T0 + 50,
        );
        expect(r.applied).to.equal(true);
        expect(r.state).to.equal('RETRYING');
        expect(r.entry).to.not.equal(null);
        const { seq, ...entry } = r.entry!;
        expect(seq).to.equal((await store.getTask(id))!.seq);
        expect(entry).to.deep.equal({
          id,
          partition: 5,
          dueAt: T0 + 2000,
          priority: 'low',
          tenantId: 'tenant-r',
          taskType: 'fail',
          state: 'RETRYING',
        });

        const t = await store.getTask(id);
        expect(t!.state).to.equal('RETRYING');
        expect(t!.dueAt).to.equal(T0 + 2000);
        expect(t!.error).to.deep.equal(err);
        expect(t!.completedAt).to.equal(null);
        expect(await store.loadDue(5, T0 + 1999, 10)).to.deep.equal([]);
        expect((await store.loadDue(5, T0 + 2000, 10)).map((e) => e.id)).to.deep.equal([id]);
      });

      it('RETRYING becomes CANCELLED when a cancel was requested during the attempt', async () => {
        const [id] = idsInPartition(2, 1, 'ca-rc');
        await store.insertTasks([newTask(id)]);
        const attempt = await startTask(store, id, T0);
        expect((await store.cancelTask(id, T0 + 5)).kind).to.equal('cancelling');
        const [r] = await store.completeAttempts(
          [completion(id, attempt, 'RETRYING', { retryAt: T0 + 1000, error: taskError('aborted', 'cancelled') })],
          T0 + 10,
        );
        expect(r.applied).to.equal(true);
        expect(r.state).to.equal('CANCELLED');
        const t = await store.getTask(id);
        expect(t!.state).to.equal('CANCELLED');
        expect(t!.completedAt).to.equal(T0 + 10);
        expect(await store.loadDue(2, T0 + 1_000_000, 10)).to.deep.equal([]);
        expect(await store.claimTasks([id], 'w', T0 + 2000, 1000)).to.deep.equal([]);
        const history = await store.getAttempts(id);
        expect(history.map((h) => h.outcome)).to.deep.equal(['CANCELLED']);
      });

      it('SUCCEEDED wins over a cancel requested during the attempt', async () => {
        await store.insertTasks([newTask('ca-race')]);
        const attempt = await startTask(store, 'ca-race', T0);
        await store.cancelTask('ca-race', T0 + 1);
        const [r] = await store.completeAttempts([completion('ca-race', attempt, 'SUCCEEDED', { result: 42 })], T0 + 2);
        expect(r.applied).to.equal(true);
        expect(r.state).to.equal('SUCCEEDED');
        expect((await store.getTask('ca-race'))!.result).to.equal(42);
      });

      it('FAILED, DEAD and CANCELLED targets are terminal and keep the error', async () => {
        await store.insertTasks([newTask('ca-f'), newTask('ca-d'), newTask('ca-c')]);
        for (const id of ['ca-f', 'ca-d', 'ca-c']) await startTask(store, id, T0);
        const results = await store.completeAttempts(
          [
            completion('ca-f', 1, 'FAILED', { error: taskError('bad input', 'PermanentError', false) }),
            completion('ca-d', 1, 'DEAD', { error: taskError('gave up', 'Error', true) }),
            completion('ca-c', 1, 'CANCELLED', { error: taskError('aborted', 'cancelled', false) }),
          ],
          T0 + 30,
        );
        expect(results.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
          ['ca-f', true, 'FAILED'],
          ['ca-d', true, 'DEAD'],
          ['ca-c', true, 'CANCELLED'],
        ]);
        const f = await store.getTask('ca-f');
        expect(f!.error).to.deep.equal(taskError('bad input', 'PermanentError', false));
        expect(f!.completedAt).to.equal(T0 + 30);
        expect((await store.getTask('ca-d'))!.state).to.equal('DEAD');
        expect((await store.getTask('ca-c'))!.state).to.equal('CANCELLED');
        for (const id of ['ca-f', 'ca-d', 'ca-c']) {
          expect(await store.markPending([id], T0 + 1_000_000), id).to.deep.equal([]);
        }
      });

      it('answers a batch in input order, applying each completion on its own', async () => {
        await store.insertTasks([newTask('ca-b1'), newTask('ca-b2')]);
        await startTask(store, 'ca-b1', T0);
        await startTask(store, 'ca-b2', T0);
        const results = await store.completeAttempts(
          [
            completion('ca-b2', 1, 'SUCCEEDED'),
            completion('ca-missing', 1, 'SUCCEEDED'),
            completion('ca-b1', 9, 'SUCCEEDED'),
            completion('ca-b1', 1, 'FAILED', { error: taskError('x', 'Error', false) }),
          ],
          T0 + 5,
        );
        expect(results.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
          ['ca-b2', true, 'SUCCEEDED'],
          ['ca-missing', false, null],
          ['ca-b1', false, 'RUNNING'],
          ['ca-b1', true, 'FAILED'],
        ]);
      });

      it('keeps one attempt-history row per finished attempt, in order, with outcome and error', async () => {
        await store.insertTasks([newTask('ca-hist', { retry: { maxRetries: 2, backoff: 'fixed', delaySeconds: 1 } })]);
        const e1 = taskError('timeout after 30s', 'timeout');
        const e2 = taskError('worker lost', 'worker_lost');
        const e3 = taskError('boom', 'Error');

        await startTask(store, 'ca-hist', T0 + 0, 'w-a');
        await store.completeAttempts([completion('ca-hist', 1, 'RETRYING', { retryAt: T0 + 1000, error: e1 })], T0 + 100);
        await startTask(store, 'ca-hist', T0 + 1000, 'w-b');
        await store.completeAttempts([completion('ca-hist', 2, 'RETRYING', { retryAt: T0 + 2000, error: e2 })], T0 + 1100);
        // A duplicate of attempt 2's completion must not add a row.
        await store.completeAttempts([completion('ca-hist', 2, 'RETRYING', { retryAt: T0 + 2000, error: e2 })], T0 + 1150);
        await startTask(store, 'ca-hist', T0 + 2000, 'w-c');
        await store.completeAttempts([completion('ca-hist', 3, 'DEAD', { error: e3 })], T0 + 2100);

        expect(await store.getAttempts('ca-hist')).to.deep.equal([
          { taskId: 'ca-hist', attempt: 1, workerId: 'w-a', startedAt: T0, endedAt: T0 + 100, outcome: 'RETRYING', error: e1 },
          { taskId: 'ca-hist', attempt: 2, workerId: 'w-b', startedAt: T0 + 1000, endedAt: T0 + 1100, outcome: 'RETRYING', error: e2 },
          { taskId: 'ca-hist', attempt: 3, workerId: 'w-c', startedAt: T0 + 2000, endedAt: T0 + 2100, outcome: 'DEAD', error: e3 },
        ]);
        const t = await store.getTask('ca-hist');
        expect(t!.state).to.equal('DEAD');
        expect(t!.attempts).to.equal(3);
        expect(t!.error).to.deep.equal(e3);

        await finishedTask(store, 'ca-hist-ok', 'SUCCEEDED', T0);
        const ok = await store.getAttempts('ca-hist-ok');
        expect(ok).to.have.length(1);
        expect(ok[0].outcome).to.equal('SUCCEEDED');
        expect(ok[0].error).to.equal(null);
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('cancelTask', () => {
      for (const waiting of ['SCHEDULED', 'PENDING', 'RETRYING'] as const) {
        it(`cancels a ${waiting} task at once`, async () => {
          const id = `cx-${waiting.toLowerCase()}`;
          await store.insertTasks([newTask(id, waiting === 'SCHEDULED' ? { scheduledAt: T0 + 60_000 } : {})]);
          if (waiting === 'RETRYING') {
            const attempt = await startTask(store, id, T0);
            await store.completeAttempts([completion(id, attempt, 'RETRYING', { retryAt: T0 + 500 })], T0 + 1);
          }
          expect(await stateOf(id)).to.equal(waiting);
          const r = await store.cancelTask(id, T0 + 10);
          expect(r.kind).to.equal('cancelled');
          if (r.kind !== 'cancelled') return;
          expect(r.task.id).to.equal(id);
          expect(r.task.state).to.equal('CANCELLED');
          const t = await store.getTask(id);
          expect(t!.state).to.equal('CANCELLED');
          expect(t!.updatedAt).to.equal(T0 + 10);
          expect(await store.markPending([id], T0 + 1_000_000)).to.deep.equal([]);
          expect(await store.claimTasks([id], 'w', T0 + 1_000_000, 1000)).to.deep.equal([]);
          expect(await store.loadDue(t!.partition, T0 + 1_000_000, 100)).to.deep.equal([]);
          expect(await stateOf(id)).to.equal('CANCELLED');
        });
      }

      it('marks a RUNNING task as cancelling (cancelRequested) without ending it', async () => {
        await store.insertTasks([newTask('cx-run')]);
        await startTask(store, 'cx-run', T0);
        const r = await store.cancelTask('cx-run', T0 + 3);
        expect(r.kind).to.equal('cancelling');
        if (r.kind !== 'cancelling') return;
        expect(r.task.state).to.equal('RUNNING');
        expect(r.task.cancelRequested).to.equal(true);
        const t = await store.getTask('cx-run');
        expect(t!.state).to.equal('RUNNING');
        expect(t!.cancelRequested).to.equal(true);
        const again = await store.cancelTask('cx-run', T0 + 4);
        expect(again.kind).to.equal('cancelling');
      });

      for (const terminal of ['SUCCEEDED', 'FAILED', 'DEAD'] as const) {
        it(`answers conflict with the state for a ${terminal} task`, async () => {
          const id = `cx-${terminal.toLowerCase()}`;
          await finishedTask(store, id, terminal, T0);
          const before = await store.getTask(id);
          const r = await store.cancelTask(id, T0 + 100);
          expect(r.kind).to.equal('conflict');
          if (r.kind !== 'conflict') return;
          expect(r.task.state).to.equal(terminal);
          expect(await store.getTask(id)).to.deep.equal(before);
        });
      }

      it('answers conflict for a task that is already CANCELLED', async () => {
        await store.insertTasks([newTask('cx-twice')]);
        await store.cancelTask('cx-twice', T0);
        const r = await store.cancelTask('cx-twice', T0 + 1);
        expect(r.kind).to.equal('conflict');
        if (r.kind === 'conflict') expect(r.task.state).to.equal('CANCELLED');
      });

      it('answers not_found for an unknown id', async () => {
        expect(await store.cancelTask('cx-nobody', T0)).to.deep.equal({ kind: 'not_found' });
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('listTasks', () => {
      async function insertOneByOne(tasks: NewTask[]): Promise<void> {
        for (const t of tasks) await store.insertTasks([t]);
      }

      async function allPages(query: { limit: number; status?: TaskState; taskType?: string; queue?: string }) {
        const pages: TaskRecord[][] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 100; guard++) {
          const page = await store.listTasks({ ...query, cursor });
          pages.push(page.tasks);
          if (page.nextCursor === null) return pages;
          expect(page.nextCursor).to.be.a('string');
          cursor = page.nextCursor;
        }
        throw new Error('pagination did not end');
      }

      it('lists newest first', async () => {
        const ids = ['ls-1', 'ls-2', 'ls-3', 'ls-4'];
        await insertOneByOne(ids.map((id, i) => newTask(id, { createdAt: T0 + i })));
        const page = await store.listTasks({ limit: 10 });
        expect(page.tasks.map((t) => t.id)).to.deep.equal([...ids].reverse());
        expect(page.nextCursor).to.equal(null);
      });

      it('returns full records', async () => {
        const t = newTask('ls-full', { payload: { a: [1, 'ü'] }, metadata: { k: 'v' } });
        await store.insertTasks([t]);
        const page = await store.listTasks({ limit: 1 });
        expect(page.tasks.map(withoutSeq)).to.deep.equal([freshRecord(t)]);
      });

      it('answers an empty page on an empty store', async () => {
        expect(await store.listTasks({ limit: 10 })).to.deep.equal({ tasks: [], nextCursor: null });
      });

      it('filters by status, taskType and queue (alone and combined)', async () => {
        await insertOneByOne([
          newTask('f-1', { taskType: 'echo', queue: 'q1' }),
          newTask('f-2', { taskType: 'http', queue: 'q1' }),
          newTask('f-3', { taskType: 'echo', queue: 'q2', scheduledAt: T0 + 10_000 }),
          newTask('f-4', { taskType: 'http', queue: 'q2' }),
          newTask('f-5', { taskType: 'echo', queue: 'q1' }),
        ]);
        await store.cancelTask('f-4', T0);
        await startTask(store, 'f-5', T0);
        const ids = async (q: Parameters<Store['listTasks']>[0]) => (await store.listTasks(q)).tasks.map((t) => t.id);

        expect(await ids({ limit: 10, status: 'PENDING' })).to.deep.equal(['f-2', 'f-1']);
        expect(await ids({ limit: 10, status: 'SCHEDULED' })).to.deep.equal(['f-3']);
        expect(await ids({ limit: 10, status: 'CANCELLED' })).to.deep.equal(['f-4']);
        expect(await ids({ limit: 10, status: 'RUNNING' })).to.deep.equal(['f-5']);
        expect(await ids({ limit: 10, status: 'DEAD' })).to.deep.equal([]);
        expect(await ids({ limit: 10, taskType: 'echo' })).to.deep.equal(['f-5', 'f-3', 'f-1']);
        expect(await ids({ limit: 10, queue: 'q2' })).to.deep.equal(['f-4', 'f-3']);
        expect(await ids({ limit: 10, taskType: 'echo', queue: 'q1' })).to.deep.equal(['f-5', 'f-1']);
        expect(await ids({ limit: 10, taskType: 'echo', queue: 'q1', status: 'PENDING' })).to.deep.equal(['f-1']);
        expect(await ids({ limit: 10, queue: 'nope' })).to.deep.equal([]);
      });

      it('visits every task exactly once across pages (25 tasks, limit 10 → 10, 10, 5)', async () => {
        const ids = Array.from({ length: 25 }, (_, i) => `pg-${String(i).padStart(2, '0')}`);
        await insertOneByOne(ids.map((id, i) => newTask(id, { createdAt: T0 + i })));
        const pages = await allPages({ limit: 10 });
        expect(pages.map((p) => p.length)).to.deep.equal([10, 10, 5]);
        const seen = pages.flat().map((t) => t.id);
        expect(seen).to.deep.equal([...ids].reverse());
        expect(new Set(seen).size).to.equal(25);
      });

      it('ends with nextCursor null when the last page is exactly full (20 tasks, limit 10)', async () => {
        await store.insertTasks(Array.from({ length: 20 }, (_, i) => newTask(`pg20-${i}`)));
        const pages = await allPages({ limit: 10 });
        expect(pages.map((p) => p.length)).to.deep.equal([10, 10]);
      });

      it('paginates a filtered list', async () => {
        const tasks = Array.from({ length: 25 }, (_, i) =>
          newTask(`pf-${String(i).padStart(2, '0')}`, { queue: i % 2 === 0 ? 'even' : 'odd' }),
        );
        await insertOneByOne(tasks);
        const pages = await allPages({ limit: 5, queue: 'even' });
        expect(pages.map((p) => p.length)).to.deep.equal([5, 5, 3]);
        const seen = pages.flat().map((t) => t.id);
        const expected = tasks.filter((t) => t.queue === 'even').map((t) => t.id).reverse();
        expect(seen).to.deep.equal(expected);
      });

      it('keeps a cursor stable while new tasks arrive', async () => {
        const ids = Array.from({ length: 12 }, (_, i) => `st-${String(i).padStart(2, '0')}`);
        await insertOneByOne(ids.map((id) => newTask(id)));
        const first = await store.listTasks({ limit: 5 });
        await store.insertTasks([newTask('st-new-1'), newTask('st-new-2')]);
        const seen = first.tasks.map((t) => t.id);
        let cursor = first.nextCursor;
        while (cursor !== null) {
          const page = await store.listTasks({ limit: 5, cursor });
          seen.push(...page.tasks.map((t) => t.id));
          cursor = page.nextCursor;
        }
        expect(seen).to.deep.equal([...ids].reverse());
      });

      for (const garbage of ['garbage', '%%%not-base64%%%', Buffer.from('s:abc').toString('base64url'), 'czotMQ']) {
        it(`rejects the garbage cursor ${JSON.stringify(garbage)} with ValidationError (field cursor)`, async () => {
          await store.insertTasks([newTask('gc-1')]);
          const err = await rejectionOf(() => store.listTasks({ limit: 10, cursor: garbage }));
          expect(err).to.be.instanceOf(ValidationError);
          const v = err as ValidationError;
          expect(v.code).to.equal('VALIDATION_FAILED');
          expect(v.details.field).to.equal('cursor');
        });
      }
    });

    // ------------------------------------------------------------------------------------------
    describe('findOrphanedAttempts', () => {
      it('returns the RUNNING tasks with their attempt, worker and retry settings', async () => {
        await store.insertTasks([
          newTask('or-1', { retry: { maxRetries: 4, backoff: 'linear', delaySeconds: 2 } }),
          newTask('or-2', { retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 0.5 } }),
          newTask('or-pending'),
          newTask('or-sched', { scheduledAt: T0 + 1000 }),
        ]);
        await startTask(store, 'or-1', T0, 'w-1');
        await store.completeAttempts([completion('or-1', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);
        await startTask(store, 'or-1', T0 + 10, 'w-1b');
        await startTask(store, 'or-2', T0, 'w-2');
        await finishedTask(store, 'or-done', 'SUCCEEDED', T0);
        await store.insertTasks([newTask('or-retrying')]);
        await startTask(store, 'or-retrying', T0);
        await store.completeAttempts([completion('or-retrying', 1, 'RETRYING', { retryAt: T0 + 10 })], T0 + 1);

        const orphans = await store.findOrphanedAttempts(100);
        expect(orphans).to.have.deep.members([
          { taskId: 'or-1', attempt: 2, workerId: 'w-1b', retry: { maxRetries: 4, backoff: 'linear', delaySeconds: 2 } },
          { taskId: 'or-2', attempt: 1, workerId: 'w-2', retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 0.5 } },
        ]);
        expect(orphans).to.have.length(2);
      });

      it('respects the limit and returns nothing when nothing runs', async () => {
        expect(await store.findOrphanedAttempts(10)).to.deep.equal([]);
        const ids = ['ol-1', 'ol-2', 'ol-3'];
        await store.insertTasks(ids.map((id) => newTask(id)));
        await store.claimTasks(ids, 'w', T0, 1000);
        const some = await store.findOrphanedAttempts(2);
        expect(some).to.have.length(2);
        for (const o of some) expect(ids).to.include(o.taskId);
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('countByState', () => {
      it('zero-fills every state on an empty store', async () => {
        const counts = await store.countByState();
        expect(counts).to.deep.equal(Object.fromEntries(TASK_STATES.map((s) => [s, 0])));
      });

      it('counts every state', async () => {
        await store.insertTasks([
          newTask('cs-s1', { scheduledAt: T0 + 1000 }),
          newTask('cs-s2', { scheduledAt: T0 + 2000 }),
          newTask('cs-p1'),
          newTask('cs-p2'),
          newTask('cs-p3'),
          newTask('cs-r'),
          newTask('cs-rt'),
          newTask('cs-c'),
        ]);
        await startTask(store, 'cs-r', T0);
        await startTask(store, 'cs-rt', T0);
        await store.completeAttempts([completion('cs-rt', 1, 'RETRYING', { retryAt: T0 + 100 })], T0 + 1);
        await store.cancelTask('cs-c', T0);
        await finishedTask(store, 'cs-ok1', 'SUCCEEDED', T0);
        await finishedTask(store, 'cs-ok2', 'SUCCEEDED', T0);
        await finishedTask(store, 'cs-f', 'FAILED', T0);
        await finishedTask(store, 'cs-d', 'DEAD', T0);

        expect(await store.countByState()).to.deep.equal({
          SCHEDULED: 2,
          PENDING: 3,
          RUNNING: 1,
          SUCCEEDED: 2,
          FAILED: 1,
          RETRYING: 1,
          DEAD: 1,
          CANCELLED: 1,
          BLOCKED: 0,
        });
      });
    });

    // ------------------------------------------------------------------------------------------
    describe('open / close', () => {
      it('answers ping while open', async () => {
        expect(await store.ping()).to.equal(true);
      });

      it('close is idempotent', async () => {
        await store.close();
        await store.close();
      });

      it('close flushes writes issued before it: their callers are answered and the data survives', async () => {
        const insert = store.insertTasks([newTask('fl-1'), newTask('fl-2')]);
        const cancel = store.cancelTask('fl-1', T0 + 1);
        await store.close();
        await insert;
        expect((await cancel).kind).to.equal('cancelled');
        await store.open(PARTITIONS);
        expect(await stateOf('fl-1')).to.equal('CANCELLED');
        expect(await stateOf('fl-2')).to.equal('PENDING');
      });

      it('returns a promise from every method after close, never throwing synchronously', async () => {
        await store.close();
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['insertTasks', () => store.insertTasks([newTask('late')])],
          ['markPending', () => store.markPending(['late'], T0)],
          ['claimTasks', () => store.claimTasks(['late'], 'w', T0, 1000)],
          ['completeAttempts', () => store.completeAttempts([completion('late', 1, 'SUCCEEDED')], T0)],
          ['cancelTask', () => store.cancelTask('late', T0)],
          ['getTask', () => store.getTask('late')],
          ['getAttempts', () => store.getAttempts('late')],
          ['listTasks', () => store.listTasks({ limit: 10 })],
          ['loadDue', () => store.loadDue(0, T0, 10)],
          ['findOrphanedAttempts', () => store.findOrphanedAttempts(10)],
          ['countByState', () => store.countByState()],
        ];
        for (const [method, call] of calls) {
          let result: unknown;
          expect(() => {
            result = call();
          }, method).to.not.throw();
          expect(result, method).to.be.instanceOf(Promise);
          await (result as Promise<unknown>).catch(() => undefined);
        }
      });

      it('refuses to reopen with another partition count (StoreConfigError)', async () => {
        await store.insertTasks([newTask('pc-1')]);
        await store.close();
        const err = await rejectionOf(() => store.open(PARTITIONS * 2));
        expect(err).to.be.instanceOf(StoreConfigError);
        expect((err as Error).name).to.equal('StoreConfigError');
        expect((err as Error).message).to.match(/partition/i);
        // The refused open changed nothing: the original count still opens, with the data.
        await store.open(PARTITIONS);
        expect((await store.getTask('pc-1'))?.state).to.equal('PENDING');
      });

      it('keeps every committed write across close and reopen with the same partition count', async () => {
        const full = newTask('du-full', {
          payload: { keep: ['me', 1, { ü: null }] },
          metadata: { tenant_id: 'tenant-a' },
          scheduledAt: T0 + 5000,
          priority: 'high',
        });
        await store.insertTasks([full, newTask('du-run'), newTask('du-done'), newTask('du-cancel')]);
        await startTask(store, 'du-run', T0, 'w-d');
        await startTask(store, 'du-done', T0, 'w-d');
        await store.completeAttempts([completion('du-done', 1, 'SUCCEEDED', { result: { r: 'ok' }, durationMs: 9 })], T0 + 9);
        await store.cancelTask('du-cancel', T0);
        const before = {
          tasks: (await store.listTasks({ limit: 100 })).tasks,
          attempts: await store.getAttempts('du-done'),
          counts: await store.countByState(),
        };

        await store.close();
        await store.open(PARTITIONS);

        expect((await store.listTasks({ limit: 100 })).tasks).to.deep.equal(before.tasks);
        expect(await store.getAttempts('du-done')).to.deep.equal(before.attempts);
        expect(await store.countByState()).to.deep.equal(before.counts);
        expect(withoutSeq(await store.getTask('du-full'))).to.deep.equal(freshRecord(full));
        expect(await store.findOrphanedAttempts(10)).to.deep.equal([
          { taskId: 'du-run', attempt: 1, workerId: 'w-d', retry: newTask('x').retry },
        ]);
        // Still writable after the reopen.
        await store.insertTasks([newTask('du-after')]);
        expect((await store.getTask('du-after'))?.state).to.equal('PENDING');
      });
    });
  });
}
