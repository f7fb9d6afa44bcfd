/** Store conformance, insertTasks / getTask (see ./index.ts). */
import { expect } from 'chai';
import { newTask, rejectionOf, T0 } from '../fixtures';
import { ConformanceContext } from './context';
import { freshRecord, withoutSeq } from './records';

export function describeInsertAndGet(ctx: ConformanceContext): void {
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
      await ctx.store().insertTasks([t]);
      expect(withoutSeq(await ctx.store().getTask('rt-full'))).to.deep.equal(freshRecord(t));
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
      await ctx.store().insertTasks([t]);
      const got = await ctx.store().getTask('rt-null');
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
        { '': 'empty key', ключ: 'значение', '🔑': '🔒', 'a.b': { $dollar: 1 } },
        'e\u0301 (combining) ﷺ 𝄞 \u2028\u2029',
      ];
      const tasks = payloads.map((payload, i) => newTask(`rt-json-${i}`, { payload }));
      await ctx.store().insertTasks(tasks);
      for (const t of tasks) {
        const got = await ctx.store().getTask(t.id);
        expect(got?.payload, t.id).to.deep.equal(t.payload);
      }
    });

    it('gives each task its own seq, increasing in insertion order, and answers it', async () => {
      const first = await ctx.store().insertTasks([newTask('seq-a'), newTask('seq-b')]);
      const second = await ctx.store().insertTasks([newTask('seq-c')]);
      const seqs = await Promise.all(['seq-a', 'seq-b', 'seq-c'].map(async (id) => (await ctx.store().getTask(id))!.seq));
      expect([...first, ...second].map((r) => r.seq)).to.deep.equal(seqs);
      expect(seqs[0]).to.be.below(seqs[1]);
      expect(seqs[1]).to.be.below(seqs[2]);
    });

    it('returns null for an unknown id and no attempts for a fresh task', async () => {
      expect(await ctx.store().getTask('nope')).to.equal(null);
      await ctx.store().insertTasks([newTask('fresh')]);
      expect(await ctx.store().getAttempts('fresh')).to.deep.equal([]);
      expect(await ctx.store().getAttempts('nope')).to.deep.equal([]);
    });

    it('accepts an empty list', async () => {
      await ctx.store().insertTasks([]);
      expect((await ctx.store().listTasks({ limit: 10 })).tasks).to.have.length(0);
    });

    it('rejects a list containing a duplicate id and stores none of it (atomic)', async () => {
      const list = [newTask('dup-1'), newTask('dup-2'), newTask('dup-1', { payload: 'second' }), newTask('dup-3')];
      const err = await rejectionOf(() => ctx.store().insertTasks(list));
      expect(err).to.be.instanceOf(Error);
      for (const id of ['dup-1', 'dup-2', 'dup-3']) expect(await ctx.store().getTask(id), id).to.equal(null);
      const counts = await ctx.store().countByState();
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
    });

    it('rejects a list that repeats an already stored id, keeps the stored task and stores none of the list', async () => {
      const original = newTask('exists', { payload: 'original' });
      await ctx.store().insertTasks([original]);
      const err = await rejectionOf(() =>
        ctx.store().insertTasks([newTask('new-1'), newTask('exists', { payload: 'replacement' }), newTask('new-2')]),
      );
      expect(err).to.be.instanceOf(Error);
      expect(await ctx.store().getTask('new-1')).to.equal(null);
      expect(await ctx.store().getTask('new-2')).to.equal(null);
      expect(withoutSeq(await ctx.store().getTask('exists'))).to.deep.equal(freshRecord(original));
    });
  });

  describe('getTaskStates', () => {
    it('reads the state of many tasks at once; unknown ids are absent, duplicates and an empty list are fine', async () => {
      const ids = Array.from({ length: 1203 }, (_, i) => `gs-${i}`);
      await ctx.store().insertTasks(ids.map((id, i) => newTask(id, i % 2 === 0 ? {} : { scheduledAt: T0 + 60_000 })));
      expect((await ctx.store().cancelTask('gs-4', T0 + 1)).kind).to.equal('cancelled');
      const states = await ctx.store().getTaskStates([...ids, 'gs-4', 'gs-nope', 'gs-4']);
      expect(states.size).to.equal(1203);
      expect(states.get('gs-0')).to.equal('PENDING');
      expect(states.get('gs-1')).to.equal('SCHEDULED');
      expect(states.get('gs-4')).to.equal('CANCELLED');
      expect(states.get('gs-1202')).to.equal('PENDING');
      expect(states.has('gs-nope')).to.equal(false);
      expect((await ctx.store().getTaskStates([])).size).to.equal(0);
    });
  });
}
