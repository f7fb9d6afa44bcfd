/**
 * Store conformance, workflows (DESIGN §8; see ./index.ts): atomic insert, release of BLOCKED
 * tasks as upstreams succeed, upstream_failed propagation, workflow status kept with its tasks,
 * cancel, dead-letter replay resuming descendants, upstream results in claims, the limbo audit.
 */
import { expect } from 'chai';
import { NewWorkflow, NewWorkflowTask } from '../../../src/domain/workflow';
import { Store } from '../../../src/storage/store';
import { completion, newTask, rejectionOf, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';

export type Spec = Array<[local: string, deps: string[], overrides?: Partial<NewWorkflowTask>]>;

/** A workflow `id` whose task ids are `<id>.<local>`; tasks without deps are PENDING, others BLOCKED. */
export function workflow(id: string, spec: Spec, now = T0): NewWorkflow {
  return {
    id,
    workflowName: `wf ${id}`,
    tenantId: 'tenant-a',
    metadata: { tenant_id: 'tenant-a' },
    createdAt: now,
    tasks: spec.map(([local, deps, overrides]) => {
      const t = newTask(`${id}.${local}`, { createdAt: now, scheduledAt: overrides?.scheduledAt ?? null });
      return {
        ...t,
        ...overrides,
        state: overrides?.state ?? (deps.length === 0 ? (t.state as 'SCHEDULED' | 'PENDING') : 'BLOCKED'),
        workflowTaskId: local,
        dependsOn: deps.map((d) => `${id}.${d}`),
      };
    }),
  };
}

/** Claims task `id` and records its end; returns the completion result. */
export async function run(
  store: Store,
  id: string,
  state: 'SUCCEEDED' | 'FAILED' | 'DEAD' | 'CANCELLED',
  now: number,
  result: unknown = null,
) {
  const [claimed] = await store.claimTasks([id], 'w-1', now, 60_000);
  if (!claimed) throw new Error(`could not claim ${id}`);
  const error = state === 'SUCCEEDED' ? null : taskError(`${state} ${id}`, 'Error', state === 'DEAD');
  const [r] = await store.completeAttempts([completion(id, claimed.attempt, state, { result, error })], now + 1);
  return { claimed, result: r };
}

/**
 * The key order of a JS object built in the order given: integer-like keys ("10") always come
 * first, ascending (ECMA-262 OrdinaryOwnPropertyKeys), the others as inserted.
 */
function byIntegerKeysFirst(a: string, b: string): number {
  const ia = /^(0|[1-9]\d*)$/.test(a);
  const ib = /^(0|[1-9]\d*)$/.test(b);
  return ia && ib ? Number(a) - Number(b) : ia ? -1 : ib ? 1 : 0;
}

export const DIAMOND: Spec = [
  ['A', []],
  ['B', ['A']],
  ['C', ['A']],
  ['D', ['B', 'C']],
  ['E', ['D']],
];

export function describeWorkflows(ctx: ConformanceContext): void {
  describe('workflows: insertWorkflow, release, propagation, status, cancel, replay', () => {
    const states = async (wf: string, locals: string[]) => Promise.all(locals.map((l) => ctx.stateOf(`${wf}.${l}`)));

    it('insertWorkflow stores the workflow RUNNING, roots waiting and the rest BLOCKED (not due), with their edges', async () => {
      await ctx.store().insertWorkflow(workflow('w1', DIAMOND));
      const wf = await ctx.store().getWorkflow('w1');
      expect(wf).to.include({
        id: 'w1',
        workflowName: 'wf w1',
        status: 'RUNNING',
        taskCount: 5,
        openTasks: 5,
        cancelRequested: false,
        completedAt: null,
        tenantId: 'tenant-a',
      });
      const tasks = await ctx.store().getWorkflowTasks('w1');
      expect(tasks.map((t) => [t.workflowTaskId, t.state, t.unmetDependencies])).to.deep.equal([
        ['A', 'PENDING', 0],
        ['B', 'BLOCKED', 1],
        ['C', 'BLOCKED', 1],
        ['D', 'BLOCKED', 2],
        ['E', 'BLOCKED', 1],
      ]);
      expect(tasks[3].dependencies).to.have.members(['B', 'C']);
      expect(tasks[3].taskId).to.equal('w1.D');
      expect(await ctx.store().getTask('w1.D')).to.include({ workflowId: 'w1', workflowTaskId: 'D', state: 'BLOCKED' });
      const due: string[] = [];
      for (let p = 0; p < 8; p++) due.push(...(await ctx.store().loadDue(p, T0 + 1e9, 100)).map((e) => e.id));
      expect(due).to.deep.equal(['w1.A']);
      expect(await ctx.store().getWorkflow('nope')).to.equal(null);
      expect(await ctx.store().getWorkflowTasks('nope')).to.deep.equal([]);
    });

    it('insertWorkflow answers each task its stored seq, in input order and increasing', async () => {
      await ctx.store().insertTasks([newTask('before-wseq')]);
      const seqs = await ctx.store().insertWorkflow(
        workflow('wseq', [
          ['R1', []],
          ['X', ['R1']],
          ['R2', []],
          ['R3', []],
        ]),
      );
      const stored = await Promise.all(['R1', 'X', 'R2', 'R3'].map(async (l) => (await ctx.store().getTask(`wseq.${l}`))!.seq));
      expect(seqs).to.deep.equal(stored);
      expect(seqs[0]).to.be.greaterThan((await ctx.store().getTask('before-wseq'))!.seq);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i], `seq ${i}`).to.be.greaterThan(seqs[i - 1]);
    });

    it('insertWorkflow is all or none: a task id already in use rejects it and stores nothing', async () => {
      await ctx.store().insertTasks([newTask('w2.C')]);
      await rejectionOf(() => ctx.store().insertWorkflow(workflow('w2', DIAMOND)));
      expect(await ctx.store().getWorkflow('w2')).to.equal(null);
      expect(await ctx.stateOf('w2.A')).to.equal(undefined);
      expect((await ctx.store().listTasks({ limit: 10 })).tasks.map((t) => t.id)).to.deep.equal(['w2.C']);
      expect((await ctx.store().listWorkflows({ limit: 10 })).workflows).to.deep.equal([]);
    });

    it('a SUCCEEDED upstream releases a downstream task at its last unmet dependency, in the same write', async () => {
      await ctx.store().insertWorkflow(workflow('w3', DIAMOND));
      const a = await run(ctx.store(), 'w3.A', 'SUCCEEDED', T0 + 10, { a: 1 });
      expect(a.result.released?.map((e) => [e.id, e.state, e.dueAt])).to.have.deep.members([
        ['w3.B', 'PENDING', T0 + 11],
        ['w3.C', 'PENDING', T0 + 11],
      ]);
      const b = await run(ctx.store(), 'w3.B', 'SUCCEEDED', T0 + 20, 'b');
      expect(b.result.released ?? []).to.deep.equal([]);
      expect((await ctx.store().getWorkflowTasks('w3')).find((t) => t.workflowTaskId === 'D')?.unmetDependencies).to.equal(1);
      const c = await run(ctx.store(), 'w3.C', 'SUCCEEDED', T0 + 30, 'c');
      expect(c.result.released?.map((e) => e.id)).to.deep.equal(['w3.D']);
      // The claim of D carries its upstream results, keyed by workflow-local id.
      const d = await run(ctx.store(), 'w3.D', 'SUCCEEDED', T0 + 40, 'd');
      expect(d.claimed.upstreamResults).to.deep.equal({ B: 'b', C: 'c' });
      expect(await ctx.store().getWorkflow('w3')).to.include({ status: 'RUNNING', openTasks: 1 });
      await run(ctx.store(), 'w3.E', 'SUCCEEDED', T0 + 50);
      expect(await ctx.store().getWorkflow('w3')).to.include({ status: 'SUCCEEDED', openTasks: 0, completedAt: T0 + 51 });
      // A task claimed on its own has no upstream results.
      await ctx.store().insertTasks([newTask('plain')]);
      const [plain] = await ctx.store().claimTasks(['plain'], 'w-1', T0, 1000);
      expect(plain).to.not.have.property('upstreamResults');
    });

    it('several tasks of one workflow completed in one call (a dispatcher batch): each release and count applies once', async () => {
      const wide: Spec = [
        ['A', []],
        ['B', []],
        ['C', []],
        ['D', []],
        ['J', ['A', 'B', 'C', 'D']],
        ['K', ['A', 'B']],
      ];
      await ctx.store().insertWorkflow(workflow('wb', wide));
      const ids = ['wb.A', 'wb.B', 'wb.C', 'wb.D'];
      const claimed = await ctx.store().claimTasks(ids, 'w-1', T0 + 5, 60_000);
      const results = await ctx.store().completeAttempts(
        claimed.map((t) => completion(t.id, t.attempt, 'SUCCEEDED', { result: t.id })),
        T0 + 10,
      );
      expect(results.map((r) => r.applied)).to.deep.equal([true, true, true, true]);
      expect(results.flatMap((r) => r.released ?? []).map((e) => e.id)).to.have.members(['wb.J', 'wb.K']);
      expect(await states('wb', ['J', 'K'])).to.deep.equal(['PENDING', 'PENDING']);
      expect(await ctx.store().getWorkflow('wb')).to.include({ status: 'RUNNING', openTasks: 2 });
      const [j] = await ctx.store().claimTasks(['wb.J'], 'w-1', T0 + 20, 60_000);
      expect(j.upstreamResults).to.deep.equal({ A: 'wb.A', B: 'wb.B', C: 'wb.C', D: 'wb.D' });
    });

    it("dependencies and upstream results are listed in the upstream tasks' submission order, not as declared", async () => {
      await ctx.store().insertWorkflow(
        workflow('word', [
          ['z', []],
          ['b', []],
          ['10', []],
          ['ü😀', []],
          ['J', ['ü😀', 'z', '10', 'b']],
        ]),
      );
      const j = (await ctx.store().getWorkflowTasks('word')).find((t) => t.workflowTaskId === 'J');
      expect(j?.dependencies).to.deep.equal(['z', 'b', '10', 'ü😀']);
      const ups = ['word.z', 'word.b', 'word.10', 'word.ü😀'];
      const claimed = await ctx.store().claimTasks(ups, 'w-1', T0 + 5, 60_000);
      await ctx.store().completeAttempts(
        claimed.map((t) => completion(t.id, t.attempt, 'SUCCEEDED', { result: t.id })),
        T0 + 10,
      );
      const [jc] = await ctx.store().claimTasks(['word.J'], 'w-1', T0 + 20, 60_000);
      expect(Object.keys(jc.upstreamResults ?? {})).to.deep.equal(['z', 'b', '10', 'ü😀'].sort(byIntegerKeysFirst));
      expect(jc.upstreamResults).to.deep.equal({ z: 'word.z', b: 'word.b', 10: 'word.10', 'ü😀': 'word.ü😀' });
    });

    it('a released task with its own later scheduledAt becomes SCHEDULED, due at that time', async () => {
      await ctx.store().insertWorkflow(
        workflow('w4', [
          ['A', []],
          ['L', ['A'], { scheduledAt: T0 + 60_000 }],
        ]),
      );
      const a = await run(ctx.store(), 'w4.A', 'SUCCEEDED', T0 + 10);
      expect(a.result.released?.map((e) => [e.id, e.state, e.dueAt])).to.deep.equal([['w4.L', 'SCHEDULED', T0 + 60_000]]);
    });

    it('C5: a FAILED branch cancels its descendants (upstream_failed) at once; the other branch goes on; the workflow ends FAILED', async () => {
      await ctx.store().insertWorkflow(workflow('w5', DIAMOND));
      await run(ctx.store(), 'w5.A', 'SUCCEEDED', T0 + 10);
      await run(ctx.store(), 'w5.B', 'FAILED', T0 + 20);
      expect(await states('w5', ['B', 'C', 'D', 'E'])).to.deep.equal(['FAILED', 'PENDING', 'CANCELLED', 'CANCELLED']);
      const e = await ctx.store().getTask('w5.E');
      expect(e?.error).to.include({ type: 'upstream_failed', retryable: false });
      expect(e?.completedAt).to.equal(T0 + 21);
      expect(await ctx.store().getWorkflow('w5')).to.include({ status: 'RUNNING', openTasks: 1 });
      await run(ctx.store(), 'w5.C', 'SUCCEEDED', T0 + 30);
      expect(await ctx.store().getWorkflow('w5')).to.include({ status: 'FAILED', openTasks: 0, completedAt: T0 + 31 });
      expect((await ctx.store().auditScan(T0 + 100, T0, 10)).blockedLimboTotal).to.equal(0);
    });

    it('DEAD and CANCELLED ends propagate the same way; cancelTask of a workflow task too', async () => {
      await ctx.store().insertWorkflow(workflow('w6', DIAMOND));
      await run(ctx.store(), 'w6.A', 'DEAD', T0 + 10);
      expect(await states('w6', ['B', 'C', 'D', 'E'])).to.deep.equal(['CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
      expect(await ctx.store().getWorkflow('w6')).to.include({ status: 'FAILED', openTasks: 0 });

      await ctx.store().insertWorkflow(workflow('w7', DIAMOND));
      await run(ctx.store(), 'w7.A', 'SUCCEEDED', T0 + 10);
      const res = await ctx.store().cancelTask('w7.C', T0 + 20);
      expect(res.kind).to.equal('cancelled');
      expect(await states('w7', ['B', 'C', 'D', 'E'])).to.deep.equal(['PENDING', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
      await run(ctx.store(), 'w7.B', 'SUCCEEDED', T0 + 30);
      expect(await ctx.store().getWorkflow('w7')).to.include({ status: 'CANCELLED', openTasks: 0 });
    });

    it('cancelWorkflow: waiting tasks CANCELLED, RUNNING ones returned to abort; CANCELLED when the last ends; then conflict', async () => {
      await ctx.store().insertWorkflow(
        workflow('w8', [
          ['A', []],
          ['B', []],
          ['C', ['A', 'B']],
        ]),
      );
      const { claimed } = { claimed: (await ctx.store().claimTasks(['w8.A'], 'w-1', T0, 60_000))[0] };
      const res = await ctx.store().cancelWorkflow('w8', T0 + 5);
      expect(res.kind).to.equal('cancelled');
      if (res.kind !== 'cancelled') return;
      expect(res.running).to.deep.equal([{ taskId: 'w8.A', attempt: claimed.attempt }]);
      expect(res.workflow).to.include({ status: 'RUNNING', cancelRequested: true, openTasks: 1 });
      expect(await states('w8', ['A', 'B', 'C'])).to.deep.equal(['RUNNING', 'CANCELLED', 'CANCELLED']);
      expect((await ctx.store().getTask('w8.C'))?.error).to.include({ type: 'workflow_cancelled' });
      // The running task finished first: SUCCEEDED; the workflow is still CANCELLED.
      await ctx.store().completeAttempts([completion('w8.A', claimed.attempt, 'SUCCEEDED')], T0 + 9);
      expect(await ctx.store().getWorkflow('w8')).to.include({ status: 'CANCELLED', openTasks: 0, completedAt: T0 + 9 });
      const again = await ctx.store().cancelWorkflow('w8', T0 + 10);
      expect(again.kind).to.equal('conflict');
      expect((await ctx.store().cancelWorkflow('nope', T0)).kind).to.equal('not_found');
    });

    it('replayDead resumes the descendants a DEAD task cancelled (recomputed counts) and reopens the workflow', async () => {
      await ctx.store().insertWorkflow(workflow('w9', DIAMOND));
      await run(ctx.store(), 'w9.A', 'SUCCEEDED', T0 + 10);
      await run(ctx.store(), 'w9.C', 'SUCCEEDED', T0 + 20);
      await run(ctx.store(), 'w9.B', 'DEAD', T0 + 30);
      expect(await ctx.store().getWorkflow('w9')).to.include({ status: 'FAILED' });
      const entry = await ctx.store().replayDead('w9.B', T0 + 40);
      expect(entry).to.include({ id: 'w9.B', state: 'PENDING' });
      expect(await states('w9', ['B', 'D', 'E'])).to.deep.equal(['PENDING', 'BLOCKED', 'BLOCKED']);
      const tasks = await ctx.store().getWorkflowTasks('w9');
      expect(tasks.find((t) => t.workflowTaskId === 'D')).to.include({ unmetDependencies: 1, error: null, completedAt: null });
      expect(await ctx.store().getWorkflow('w9')).to.include({ status: 'RUNNING', openTasks: 3, completedAt: null });
      const b = await run(ctx.store(), 'w9.B', 'SUCCEEDED', T0 + 50);
      expect(b.result.released?.map((e) => e.id)).to.deep.equal(['w9.D']);
      await run(ctx.store(), 'w9.D', 'SUCCEEDED', T0 + 60);
      await run(ctx.store(), 'w9.E', 'SUCCEEDED', T0 + 70);
      expect(await ctx.store().getWorkflow('w9')).to.include({ status: 'SUCCEEDED', openTasks: 0 });
    });

    it('replayDead leaves cancelled a descendant whose other upstream failed for good', async () => {
      await ctx.store().insertWorkflow(workflow('wa', DIAMOND));
      await run(ctx.store(), 'wa.A', 'SUCCEEDED', T0 + 10);
      await run(ctx.store(), 'wa.B', 'DEAD', T0 + 20);
      await run(ctx.store(), 'wa.C', 'FAILED', T0 + 30);
      await ctx.store().replayDead('wa.B', T0 + 40);
      expect(await states('wa', ['B', 'C', 'D', 'E'])).to.deep.equal(['PENDING', 'FAILED', 'CANCELLED', 'CANCELLED']);
      expect(await ctx.store().getWorkflow('wa')).to.include({ status: 'RUNNING', openTasks: 1 });
      await run(ctx.store(), 'wa.B', 'SUCCEEDED', T0 + 50);
      expect(await ctx.store().getWorkflow('wa')).to.include({ status: 'FAILED', openTasks: 0 });
      expect((await ctx.store().auditScan(T0 + 100, T0, 10)).blockedLimbo).to.deep.equal([]);
    });

    it('listWorkflows: newest first, status filter, pagination', async () => {
      await ctx.store().insertWorkflow(workflow('l1', [['A', []]]));
      await ctx.store().insertWorkflow(workflow('l2', [['A', []]]));
      await ctx.store().insertWorkflow(workflow('l3', [['A', []]]));
      await run(ctx.store(), 'l2.A', 'SUCCEEDED', T0 + 10);
      const all = await ctx.store().listWorkflows({ limit: 10 });
      expect(all.workflows.map((w) => w.id)).to.deep.equal(['l3', 'l2', 'l1']);
      expect((await ctx.store().listWorkflows({ limit: 10, status: 'SUCCEEDED' })).workflows.map((w) => w.id)).to.deep.equal(['l2']);
      const p1 = await ctx.store().listWorkflows({ limit: 2 });
      const p2 = await ctx.store().listWorkflows({ limit: 2, cursor: p1.nextCursor as string });
      expect([...p1.workflows, ...p2.workflows].map((w) => w.id)).to.deep.equal(['l3', 'l2', 'l1']);
      expect(p2.nextCursor).to.equal(null);
    });

    it('purgeFinished keeps the finished tasks of a RUNNING workflow; deletes a finished workflow past retention', async () => {
      await ctx.store().insertWorkflow(
        workflow('p1', [
          ['A', []],
          ['B', ['A']],
        ]),
      );
      await run(ctx.store(), 'p1.A', 'SUCCEEDED', T0 + 10);
      await ctx.store().purgeFinished(T0 + 1e9, T0 + 1e9, 100);
      expect(await ctx.stateOf('p1.A')).to.equal('SUCCEEDED');
      await run(ctx.store(), 'p1.B', 'SUCCEEDED', T0 + 20);
      await ctx.store().purgeFinished(T0 + 1e9, T0 + 1e9, 100);
      await ctx.store().purgeFinished(T0 + 1e9, T0 + 1e9, 100);
      expect(await ctx.stateOf('p1.A')).to.equal(undefined);
      expect(await ctx.store().getWorkflow('p1')).to.equal(null);
    });
  });
}
