/** Store conformance, listTasks (see ./index.ts). */
import { expect } from 'chai';
import { ValidationError } from '../../../src/domain/errors';
import { NewTask, TaskRecord, TaskState } from '../../../src/domain/task';
import { Store } from '../../../src/storage/store';
import { newTask, rejectionOf, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';
import { freshRecord, withoutSeq } from './records';

export function describeList(ctx: ConformanceContext): void {
  describe('listTasks', () => {
    async function insertOneByOne(tasks: NewTask[]): Promise<void> {
      for (const t of tasks) await ctx.store().insertTasks([t]);
    }

    async function allPages(query: { limit: number; status?: TaskState; taskType?: string; queue?: string }) {
      const pages: TaskRecord[][] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const page = await ctx.store().listTasks({ ...query, cursor });
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
      const page = await ctx.store().listTasks({ limit: 10 });
      expect(page.tasks.map((t) => t.id)).to.deep.equal([...ids].reverse());
      expect(page.nextCursor).to.equal(null);
    });

    it('returns full records', async () => {
      const t = newTask('ls-full', { payload: { a: [1, 'ü'] }, metadata: { k: 'v' } });
      await ctx.store().insertTasks([t]);
      const page = await ctx.store().listTasks({ limit: 1 });
      expect(page.tasks.map(withoutSeq)).to.deep.equal([freshRecord(t)]);
    });

    it('answers an empty page on an empty store', async () => {
      expect(await ctx.store().listTasks({ limit: 10 })).to.deep.equal({ tasks: [], nextCursor: null });
    });

    it('filters by status, taskType and queue (alone and combined)', async () => {
      await insertOneByOne([
        newTask('f-1', { taskType: 'echo', queue: 'q1' }),
        newTask('f-2', { taskType: 'http', queue: 'q1' }),
        newTask('f-3', { taskType: 'echo', queue: 'q2', scheduledAt: T0 + 10_000 }),
        newTask('f-4', { taskType: 'http', queue: 'q2' }),
        newTask('f-5', { taskType: 'echo', queue: 'q1' }),
      ]);
      await ctx.store().cancelTask('f-4', T0);
      await startTask(ctx.store(), 'f-5', T0);
      const ids = async (q: Parameters<Store['listTasks']>[0]) => (await ctx.store().listTasks(q)).tasks.map((t) => t.id);

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

    it('filters by idempotencyKey (exact match, with the other filters and pages)', async () => {
      await insertOneByOne([
        newTask('ik-1', { idempotencyKey: 'order-7' }),
        newTask('ik-2', { idempotencyKey: 'order-8' }),
        newTask('ik-3', { idempotencyKey: 'order-7', tenantId: 'tenant-b' }),
        newTask('ik-4'),
      ]);
      const ids = async (q: Parameters<Store['listTasks']>[0]) => (await ctx.store().listTasks(q)).tasks.map((t) => t.id);
      expect(await ids({ limit: 10, idempotencyKey: 'order-7' })).to.deep.equal(['ik-3', 'ik-1']);
      expect(await ids({ limit: 10, idempotencyKey: 'order-7', tenantId: 'tenant-a' })).to.deep.equal(['ik-1']);
      expect(await ids({ limit: 10, idempotencyKey: 'order' })).to.deep.equal([]);
      const first = await ctx.store().listTasks({ limit: 1, idempotencyKey: 'order-7' });
      expect(first.tasks.map((t) => t.id)).to.deep.equal(['ik-3']);
      expect(await ids({ limit: 1, idempotencyKey: 'order-7', cursor: first.nextCursor as string })).to.deep.equal(['ik-1']);
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
      await ctx.store().insertTasks(Array.from({ length: 20 }, (_, i) => newTask(`pg20-${i}`)));
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
      const expected = tasks
        .filter((t) => t.queue === 'even')
        .map((t) => t.id)
        .reverse();
      expect(seen).to.deep.equal(expected);
    });

    it('keeps a cursor stable while new tasks arrive', async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `st-${String(i).padStart(2, '0')}`);
      await insertOneByOne(ids.map((id) => newTask(id)));
      const first = await ctx.store().listTasks({ limit: 5 });
      await ctx.store().insertTasks([newTask('st-new-1'), newTask('st-new-2')]);
      const seen = first.tasks.map((t) => t.id);
      let cursor = first.nextCursor;
      while (cursor !== null) {
        const page = await ctx.store().listTasks({ limit: 5, cursor });
        seen.push(...page.tasks.map((t) => t.id));
        cursor = page.nextCursor;
      }
      expect(seen).to.deep.equal([...ids].reverse());
    });

    for (const garbage of ['garbage', '%%%not-base64%%%', Buffer.from('s:abc').toString('base64url'), 'czotMQ']) {
      it(`rejects the garbage cursor ${JSON.stringify(garbage)} with ValidationError (field cursor)`, async () => {
        await ctx.store().insertTasks([newTask('gc-1')]);
        const err = await rejectionOf(() => ctx.store().listTasks({ limit: 10, cursor: garbage }));
        expect(err).to.be.instanceOf(ValidationError);
        const v = err as ValidationError;
        expect(v.code).to.equal('VALIDATION_FAILED');
        expect(v.details.field).to.equal('cursor');
      });
    }
  });
}
