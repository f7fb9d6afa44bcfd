/**
 * Store conformance, the lifecycle table (src/domain/state-machine.ts; see ./index.ts), generated
 * from the table: for every store operation that moves a task's state, and every state a task can
 * be in, a task is put in that state, the operation runs, and it must succeed if and only if the
 * table has the edge (or, for an operation that keeps the state, the guard holds the state), and
 * leave the task in the edge's `to` state (else where it was). Each operation is one test over
 * every state, reporting every mismatch at once.
 *
 * States are reached through the store's own operations where the contract allows; the rest (a
 * workflow task that is not BLOCKED while its upstream is open, a queued cron instance, a held
 * workflow task) through the adapter's test-only `forceState`.
 */
import { expect } from 'chai';
import { cronInstanceId } from '../../../src/domain/cron/cron-definition';
import { GUARDS, GuardName, TRANSITIONS, TransitionEvent } from '../../../src/domain/state-machine';
import { TASK_STATES, TaskState } from '../../../src/domain/task';
import { Store } from '../../../src/storage/store';
import { completion, newTask, T0, taskError } from '../fixtures';
import { ConformanceContext } from './context';
import { cronRecord, firing } from './cron';
import { workflow } from './workflows';

/** When every operation under test runs: after every setup step, and after every due time a setup sets. */
const T1 = T0 + 60_000;
/** A `scheduled_at` still ahead at T1. */
const LATER = T1 + 3_600_000;

/** The task an operation acts on; `upstream` is the workflow task whose end is the operation. */
interface Subject {
  id: string;
  workflowId?: string;
  upstream?: string;
  cronId?: string;
}

/** How a subject is made: a plain task, a cron instance, a workflow's only task, or a task behind an upstream. */
type SubjectKind = 'plain' | 'cron' | 'workflowRoot' | 'workflowChild' | 'replayedChild';

interface Operation {
  name: string;
  /** The edges this operation may fire (which one, the operation's arguments decide). */
  events: TransitionEvent[];
  /** The guard of an operation that also acts on tasks it does not move. */
  guard?: GuardName;
  subject: SubjectKind;
  /** The subject's own `scheduled_at` (held and blocked subjects keep it until let in). */
  scheduledAt?: number;
  /**
   * Runs the operation on the subject at T1. @returns whether the store reported it as done for
   * this task, or undefined when its answer does not say.
   */
  apply(s: Store, t: Subject): Promise<boolean | undefined>;
}

const attemptOf = async (s: Store, id: string) => (await s.getTask(id))?.attempts ?? 0;
const complete =
  (state: 'SUCCEEDED' | 'FAILED' | 'DEAD' | 'CANCELLED' | 'RETRYING', retryAt: number | null = null) =>
  async (s: Store, t: Subject) => {
    const error = state === 'SUCCEEDED' ? null : taskError(`${state} ${t.id}`);
    const [r] = await s.completeAttempts([completion(t.id, await attemptOf(s, t.id), state, { error, retryAt })], T1);
    return r.applied;
  };

/** Every store operation that changes a task's state, or writes under a state guard. */
export const OPERATIONS: Operation[] = [
  { name: 'markPending', events: ['due'], subject: 'plain', apply: async (s, t) => (await s.markPending([t.id], T1), undefined) },
  {
    name: 'claimTasks',
    events: ['claim', 'dueClaim'],
    subject: 'plain',
    apply: async (s, t) => (await s.claimTasks([t.id], 'w-lc', T1, 60_000)).length === 1,
  },
  { name: 'completeAttempts SUCCEEDED', events: ['succeed'], subject: 'plain', apply: complete('SUCCEEDED') },
  { name: 'completeAttempts RETRYING, backoff ahead', events: ['retry'], subject: 'plain', apply: complete('RETRYING', LATER) },
  { name: 'completeAttempts RETRYING, backoff over', events: ['retryNow'], subject: 'plain', apply: complete('RETRYING', T1) },
  { name: 'completeAttempts DEAD', events: ['exhaust'], subject: 'plain', apply: complete('DEAD') },
  { name: 'completeAttempts FAILED', events: ['failPermanently'], subject: 'plain', apply: complete('FAILED') },
  { name: 'completeAttempts CANCELLED', events: ['cancelRunning'], subject: 'plain', apply: complete('CANCELLED') },
  {
    name: 'cancelTask',
    events: ['cancel'],
    guard: 'attempt',
    subject: 'plain',
    apply: async (s, t) => ['cancelled', 'cancelling'].includes((await s.cancelTask(t.id, T1)).kind),
  },
  {
    name: 'updateWaitingTask, later time',
    events: ['reschedule'],
    guard: 'edit',
    subject: 'plain',
    apply: async (s, t) => (await s.updateWaitingTask(t.id, { scheduledAt: LATER }, T1)).kind === 'updated',
  },
  {
    name: 'updateWaitingTask, time now',
    events: ['rescheduleNow'],
    guard: 'edit',
    subject: 'plain',
    apply: async (s, t) => (await s.updateWaitingTask(t.id, { scheduledAt: null }, T1)).kind === 'updated',
  },
  { name: 'replayDead', events: ['replay'], subject: 'plain', apply: async (s, t) => (await s.replayDead(t.id, T1)) !== null },
  {
    name: 'releaseOverflow',
    events: ['release'],
    subject: 'plain',
    apply: async (s, t) => (await s.releaseOverflow([t.id], T1)).length === 1,
  },
  {
    name: 'releaseOverflow, own time ahead',
    events: ['releaseLater'],
    subject: 'plain',
    scheduledAt: LATER,
    apply: async (s, t) => (await s.releaseOverflow([t.id], T1)).length === 1,
  },
  {
    name: 'releaseQueuedInstances',
    events: ['releaseQueued'],
    subject: 'cron',
    apply: async (s, t) => (await s.releaseQueuedInstances([t.cronId as string], T1)).length === 1,
  },
  {
    name: 'extendLeases',
    events: [],
    guard: 'attempt',
    subject: 'plain',
    apply: async (s, t) => (await s.extendLeases([{ taskId: t.id, attempt: await attemptOf(s, t.id) }], T1 + 60_000)) === 1,
  },
  {
    name: 'saveCheckpoint',
    events: [],
    guard: 'attempt',
    subject: 'plain',
    apply: async (s, t) => (await s.saveCheckpoint(t.id, await attemptOf(s, t.id), { step: 1 }, T1)).kind === 'saved',
  },
  {
    name: 'reportProgress',
    events: [],
    guard: 'attempt',
    subject: 'plain',
    apply: async (s, t) => (await s.reportProgress([{ taskId: t.id, attempt: await attemptOf(s, t.id), value: { done: 1 } }], T1)) === 1,
  },
  {
    name: 'upstream ends FAILED',
    events: ['upstreamFailed'],
    subject: 'workflowChild',
    apply: async (s, t) => (await complete('FAILED')(s, { id: t.upstream as string }), undefined),
  },
  {
    name: 'upstream ends SUCCEEDED',
    events: ['unblock'],
    subject: 'workflowChild',
    apply: async (s, t) => (await complete('SUCCEEDED')(s, { id: t.upstream as string }), undefined),
  },
  {
    name: 'upstream ends SUCCEEDED, own time ahead',
    events: ['unblockLater'],
    subject: 'workflowChild',
    scheduledAt: LATER,
    apply: async (s, t) => (await complete('SUCCEEDED')(s, { id: t.upstream as string }), undefined),
  },
  {
    name: 'cancelWorkflow',
    events: ['cancelWorkflow'],
    subject: 'workflowRoot',
    apply: async (s, t) => (await s.cancelWorkflow(t.workflowId as string, T1), undefined),
  },
  {
    name: 'replayDead of the upstream that cancelled it',
    events: ['resume'],
    subject: 'replayedChild',
    apply: async (s, t) => (await s.replayDead(t.upstream as string, T1), undefined),
  },
];

/** Edges no Store operation can be driven into through the contract, with the reason. */
export const NOT_BY_CONTRACT: Partial<Record<TransitionEvent, string>> = {
  resumeReady: 'only the MongoDB repair pass resumes a descendant whose upstreams all succeeded meanwhile',
  resumeLater: 'only the MongoDB repair pass resumes a descendant whose upstreams all succeeded meanwhile',
};

export type ForceState = (store: Store, id: string, state: TaskState) => Promise<void>;

/** Drives a waiting (PENDING) task `id` to `state` with store operations, before T1. @returns false when the contract has no way */
async function drive(s: Store, id: string, state: TaskState): Promise<boolean> {
  const at = T0 + 1_000;
  switch (state) {
    case 'PENDING':
      return true;
    case 'SCHEDULED':
      return (await s.updateWaitingTask(id, { scheduledAt: T0 + 10_000 }, at)).kind === 'updated';
    case 'CANCELLED':
      return (await s.cancelTask(id, at)).kind === 'cancelled';
    case 'BLOCKED':
    case 'OVERFLOW':
      return false;
    default: {
      await s.markPending([id], at);
      const [claimed] = await s.claimTasks([id], 'w-setup', at, 60_000);
      if (!claimed || state === 'RUNNING') return claimed !== undefined;
      const end = state as 'SUCCEEDED' | 'FAILED' | 'DEAD' | 'RETRYING';
      const error = end === 'SUCCEEDED' ? null : taskError(`${end} ${id}`);
      const retryAt = end === 'RETRYING' ? T0 + 10_000 : null;
      return (await s.completeAttempts([completion(id, claimed.attempt, end, { error, retryAt })], at + 1))[0].applied;
    }
  }
}

/** Makes a subject of `kind` in `state` (keyed `key`, unique per store; `scheduledAt`: its own time, for held and blocked subjects). */
async function makeSubject(
  s: Store,
  kind: SubjectKind,
  key: string,
  state: TaskState,
  scheduledAt: number | null,
  force: ForceState | undefined,
): Promise<Subject> {
  let subject: Subject;
  let reached: boolean;
  if (kind === 'plain') {
    subject = { id: key };
    if (state === 'SCHEDULED') await s.insertTasks([newTask(key, { scheduledAt: T0 + 10_000 })]);
    else if (state === 'OVERFLOW') await s.insertTasks([newTask(key, { state, scheduledAt, dueAt: T0 })]);
    else await s.insertTasks([newTask(key, { scheduledAt, dueAt: T0, state: 'PENDING' })]);
    // BLOCKED is a workflow or cron-queue state: a plain task gets there only by forceState.
    reached = state === 'SCHEDULED' || state === 'OVERFLOW' || (await drive(s, key, state));
  } else if (kind === 'cron') {
    const cron = cronRecord(key, { nextFireTime: T0 });
    await s.createCron(cron);
    await s.fireCrons([firing(cron, [T0])], T0);
    subject = { id: cronInstanceId(key, T0), cronId: key };
    reached = await drive(s, subject.id, state);
  } else if (kind === 'workflowRoot') {
    await s.insertWorkflow(
      workflow(
        key,
        state === 'BLOCKED'
          ? [
              ['up', []],
              ['t', ['up']],
            ]
          : [['t', []]],
      ),
    );
    subject = { id: `${key}.t`, workflowId: key };
    reached = state === 'BLOCKED' || (await drive(s, subject.id, state));
  } else {
    await s.insertWorkflow(
      workflow(key, [
        ['up', []],
        ['t', ['up'], { scheduledAt }],
      ]),
    );
    subject = { id: `${key}.t`, workflowId: key, upstream: `${key}.up` };
    if (kind === 'replayedChild') {
      // The upstream ends DEAD: the child is CANCELLED (upstream_failed), which a replay resumes.
      await drive(s, subject.upstream as string, 'DEAD');
      reached = state === 'CANCELLED';
    } else {
      // Still BLOCKED behind its upstream, which then starts so that the operation can end it.
      await drive(s, subject.upstream as string, 'RUNNING');
      reached = state === 'BLOCKED' || (state === 'CANCELLED' && (await s.cancelTask(subject.id, T0 + 2_000)).kind === 'cancelled');
    }
  }
  if (!reached) {
    if (!force) throw new Error(`${kind} task in ${state}: unreachable through the contract, and the adapter offers no forceState`);
    await force(s, subject.id, state);
  }
  expect((await s.getTask(subject.id))?.state, `setup of a ${kind} task in ${state}`).to.equal(state);
  return subject;
}

/** The edge of `op` from `state`, if the table has one. */
function edgeOf(op: Operation, state: TaskState): { event: TransitionEvent; to: TaskState } | null {
  const candidates = op.events.filter((e) => (TRANSITIONS[e].from as readonly TaskState[]).includes(state));
  if (candidates.length > 1) throw new Error(`${op.name}: more than one edge from ${state} (${candidates.join(', ')})`);
  return candidates.length === 1 ? { event: candidates[0], to: TRANSITIONS[candidates[0]].to } : null;
}

export function describeLifecycle(ctx: ConformanceContext, force: ForceState | undefined): void {
  describe('lifecycle: every (state, operation) pair against the transition table', () => {
    it('every edge and guard of the table is exercised by an operation here (or named as out of the contract)', () => {
      const covered = new Set<string>(OPERATIONS.flatMap((o) => o.events));
      const missing = (Object.keys(TRANSITIONS) as TransitionEvent[]).filter((e) => !covered.has(e) && !NOT_BY_CONTRACT[e]);
      expect(missing, 'edges without an operation in OPERATIONS').to.deep.equal([]);
      const guards = new Set(OPERATIONS.map((o) => o.guard));
      expect(
        (Object.keys(GUARDS) as GuardName[]).filter((g) => !guards.has(g) && g !== 'fence'),
        'guards without an operation',
      ).to.deep.equal([]);
    });

    for (const op of OPERATIONS) {
      const moving = TASK_STATES.filter((state) => edgeOf(op, state)).length;
      it(`${op.name}: moves a task from exactly the ${moving} state(s) the table says, to its edge's state; from the others, not at all`, async () => {
        const s = ctx.store();
        const mismatches: string[] = [];
        for (const [i, state] of TASK_STATES.entries()) {
          const subject = await makeSubject(s, op.subject, `lc${i}-${state.toLowerCase()}`, state, op.scheduledAt ?? null, force);
          const edge = edgeOf(op, state);
          const guarded = op.guard !== undefined && (GUARDS[op.guard] as readonly TaskState[]).includes(state);
          const reported = await op.apply(s, subject);
          const after = await ctx.stateOf(subject.id);
          const expected = edge ? edge.to : state;
          if (after !== expected) mismatches.push(`${state} → ${after} (table: ${edge ? `${edge.event} → ${edge.to}` : 'no edge, stays'})`);
          if (reported !== undefined && reported !== (edge !== null || guarded)) {
            mismatches.push(
              `${state}: reported ${reported ? 'done' : 'not done'}, table says ${edge ? edge.event : guarded ? `guard ${op.guard}` : 'no edge'}`,
            );
          }
        }
        expect(mismatches).to.deep.equal([]);
      });
    }

    it('fencePartition stamps the tasks of exactly the states of the fence guard', async () => {
      const s = ctx.store();
      const mismatches: string[] = [];
      const made: Array<{ partition: number; state: TaskState }> = [];
      for (const [i, state] of TASK_STATES.entries()) {
        const subject = await makeSubject(s, 'plain', `fence${i}`, state, null, force);
        const partition = (await s.getTask(subject.id))?.partition as number;
        made.push({ partition, state });
        // Every task of the partition so far in a fenced state takes the new, higher epoch.
        const stamped = await s.fencePartition(partition, i + 1);
        const expected = made.filter((m) => m.partition === partition && (GUARDS.fence as readonly TaskState[]).includes(m.state)).length;
        if (stamped !== expected) mismatches.push(`${state}: fenced ${stamped} of the partition's tasks, expected ${expected}`);
        if ((await ctx.stateOf(subject.id)) !== state) mismatches.push(`${state}: moved by the fence`);
      }
      expect(mismatches).to.deep.equal([]);
    });
  });
}
